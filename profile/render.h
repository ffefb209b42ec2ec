#pragma once
// The three renderings of a profile: the table `ridge profile` prints, and the CSV and JSON that
// `ridge profile --format` writes and the report stores beside its figures.
#include <string>

#include "profile/profile.h"

namespace ridge::profile {

std::string render_table(const Profile& p);
std::string render_csv(const Profile& p);  // a row per layer phase
std::string render_json(const Profile& p);

}  // namespace ridge::profile
