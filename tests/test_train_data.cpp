// The training data pipeline: decoding against PIL's decode of the same files, the transforms
// against hand computations and PIL's resampling, normalization, the ImageFolder scan and its
// refusals, and the loader's batches (the same whichever threads fill them, undecodable files
// skipped and counted).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "cli.h"
#include "train/data/decode.h"
#include "train/data/folder.h"
#include "train/data/loader.h"
#include "train/data/sources.h"
#include "train/data/transforms.h"
#include "train_images.h"

using namespace ridge;
using namespace ridge::data;
using trainimg::write_jpeg;

namespace {

std::vector<uint8_t> read_bytes(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A binary PPM (P6, maxval 255), as PIL writes it.
Image read_ppm(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::string magic;
    int maxval = 0;
    Image im;
    f >> magic >> im.width >> im.height >> maxval;
    f.get();
    REQUIRE(magic == "P6");
    REQUIRE(maxval == 255);
    im.rgb.resize(size_t(im.width) * size_t(im.height) * 3);
    f.read(reinterpret_cast<char*>(im.rgb.data()), std::streamsize(im.rgb.size()));
    REQUIRE(f);
    return im;
}

fs::path images() { return fs::path(RIDGE_TEST_DATA) / "images"; }

// An image whose three channels all hold v(x, y).
Image gray_image(int w, int h, const std::function<int(int, int)>& v) {
    Image im{w, h, std::vector<uint8_t>(size_t(w) * size_t(h) * 3)};
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 0; c < 3; ++c) im.rgb[(size_t(y) * size_t(w) + size_t(x)) * 3 + size_t(c)] = uint8_t(v(x, y));
    return im;
}

// Channel c of a normalized (3, H, W) output back in 0..255 units.
double unnormalize(float v, int c) { return (double(v) * imagenet_std[c] + imagenet_mean[c]) * 255.0; }

fs::path fresh(const std::string& name) {
    fs::path d = clitest::scratch() / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

}  // namespace

// tests/data/images: written and decoded by PIL (bench/torch_train.py --decode-reference), the
// .ppm being Image.open(f).convert("RGB"), what torchvision's ImageFolder trains on. For the
// color JPEGs libjpeg-turbo's djpeg gives the same bytes as PIL.
TEST_CASE("JPEG and PNG decode to PIL's RGB pixels exactly") {
    Decoder d;
    for (const char* name : {"color420.jpg", "color444.jpg", "progressive.jpg", "gray.jpg", "cmyk.jpg", "rgb.png",
                             "rgba.png", "gray.png", "palette.png"}) {
        CAPTURE(name);
        Image want = read_ppm(images() / (std::string(name) + ".ppm"));
        Image got;
        std::vector<uint8_t> bytes = read_bytes(images() / name);
        REQUIRE(d.decode(bytes, got).empty());
        CHECK(got.width == want.width);
        CHECK(got.height == want.height);
        size_t differ = 0;
        for (size_t i = 0; i < want.rgb.size(); ++i) differ += got.rgb[i] != want.rgb[i];
        CHECK(differ == 0);
    }
}

TEST_CASE("a grayscale JPEG has three equal channels; CMYK converts with PIL's formula") {
    Decoder d;
    Image g;
    REQUIRE(d.decode(read_bytes(images() / "gray.jpg"), g).empty());
    for (size_t p = 0; p < g.rgb.size(); p += 3) {
        CHECK(g.rgb[p] == g.rgb[p + 1]);
        CHECK(g.rgb[p] == g.rgb[p + 2]);
    }
    // By hand: nk = 255 - K; R = nk - round(C nk / 255) (PIL's rounding), stored values inverted.
    const uint8_t stored[] = {255 - 0,   255 - 0,  255 - 0,   255 - 0,    // no ink: white
                              255 - 255, 255 - 0,  255 - 0,   255 - 0,    // full cyan: (0, 255, 255)
                              255 - 0,   255 - 0,  255 - 0,   255 - 255,  // full black
                              255 - 100, 255 - 50, 255 - 200, 255 - 60};
    uint8_t rgb[12];
    cmyk_to_rgb(stored, rgb, 4, true);
    const uint8_t want[] = {255, 255, 255, 0, 255, 255, 0, 0, 0,
                            // nk = 195: 195 - 100*195/255 (76.47 -> 76), 195 - 38.2 (38), 195 - 152.9 (153)
                            119, 157, 42};
    for (int i = 0; i < 12; ++i) CHECK(int(rgb[i]) == int(want[i]));
}

TEST_CASE("files that are not decodable images say why") {
    Decoder d;
    Image im;
    std::vector<uint8_t> garbage = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'i', 'm', 'a', 'g', 'e'};
    CHECK(d.decode(garbage, im).find("signature") != std::string::npos);
    CHECK_FALSE(d.decode({}, im).empty());
    std::vector<uint8_t> jpeg = read_bytes(images() / "color420.jpg");
    std::vector<uint8_t> cut(jpeg.begin(), jpeg.begin() + long(jpeg.size() / 2));
    CHECK_FALSE(d.decode(cut, im).empty());  // truncated: refused, as PIL refuses it
    std::vector<uint8_t> header_only(jpeg.begin(), jpeg.begin() + 20);
    CHECK_FALSE(d.decode(header_only, im).empty());
    std::vector<uint8_t> png = read_bytes(images() / "rgb.png");
    std::vector<uint8_t> png_cut(png.begin(), png.begin() + long(png.size() - 30));
    CHECK_FALSE(d.decode(png_cut, im).empty());
}

TEST_CASE("resampling taps: PIL's triangle widened by the scale, cut at the edges, normalized") {
    // 4 samples onto 2: scale 2, half-width 2. Output 0 centers at 1.0 and reads 0..2 with
    // 1 - |x + 0.5 - 1| / 2 = 0.75, 0.75, 0.25; output 1 centers at 3.0 and reads 1..3.
    Taps t = resample_taps(0, 4, 0, 4, 2, 0, 2);
    REQUIRE(t.first == std::vector<int>{0, 1});
    REQUIRE(t.count == std::vector<int>{3, 3});
    const double a = 0.75 / 1.75, b = 0.25 / 1.75;
    const double want[2][3] = {{a, a, b}, {b, a, a}};
    for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 3; ++k) CHECK(t.w[size_t(i * t.taps + k)] == doctest::Approx(want[i][k]).epsilon(1e-6));
    // The same size maps each sample onto itself.
    Taps id = resample_taps(0, 5, 0, 5, 5, 0, 5);
    for (int i = 0; i < 5; ++i) {
        CHECK(id.first[size_t(i)] + 0 <= i);
        double at_i = 0;
        for (int k = 0; k < id.count[size_t(i)]; ++k)
            if (id.first[size_t(i)] + k == i) at_i = id.w[size_t(i * id.taps + k)];
        CHECK(at_i == doctest::Approx(1.0));
    }
}

// PIL 9.4 in float mode ("F", no rounding between passes) on the 7 x 5 image v = (29x + 53y) mod 256:
//   im.crop((2, 1, 7, 5)).resize((3, 2), BILINEAR)     down
//   im.crop((0, 0, 3, 2)).resize((5, 4), BILINEAR)     up
//   im.resize((5, 4), BILINEAR).crop((1, 0, 4, 3))     val: shorter side 5 -> 4, centered 3 x 3
TEST_CASE("crop-and-resize and resize-and-center-crop match PIL's bilinear resampling") {
    Image src = gray_image(7, 5, [](int x, int y) { return (x * 29 + y * 53) % 256; });
    Resampler rs;
    auto check = [&](const std::vector<float>& out, int h, int w, const std::vector<double>& want) {
        REQUIRE(want.size() == size_t(h * w));
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < h * w; ++i) {
                CAPTURE(c);
                CAPTURE(i);
                CHECK(unnormalize(out[size_t(c * h * w + i)], c) == doctest::Approx(want[size_t(i)]).epsilon(1e-4));
            }
    };
    std::vector<float> down(3 * 2 * 3);
    rs.crop_resize(src, {1, 2, 4, 5}, 2, 3, false, down.data());
    check(down, 2, 3, {161.285721, 178.412704, 153.163269, 134.857147, 95.095238, 95.387756});
    std::vector<float> up(3 * 4 * 5);
    rs.crop_resize(src, {0, 0, 2, 3}, 4, 5, false, up.data());
    check(up, 4, 5, {0.0,   11.6,      29.0,  46.400002, 58.0,  13.25, 24.85, 42.25, 59.650002, 71.25,
                     39.75, 51.349998, 68.75, 86.150002, 97.75, 53.0,  64.6,  82.0,  99.400002, 111.0});
    CenterCrop cc = center_crop(7, 5, 4, 3);
    CHECK(cc.resized_width == 5);
    CHECK(cc.resized_height == 4);
    CHECK(cc.top == 0);  // round(0.5) is 0 in Python
    CHECK(cc.left == 1);
    std::vector<float> val(3 * 3 * 3);
    rs.resize_center(src, cc, 3, 3, val.data());
    check(val, 3, 3,
          {58.361111, 100.25, 142.138885, 120.19445, 162.083328, 203.972214, 182.027786, 196.765152, 116.472221});
}

TEST_CASE("the flip mirrors columns; normalization is (v / 255 - mean) / std per channel") {
    Image src = gray_image(6, 4, [](int x, int y) { return x * 40 + y; });
    for (int p = 0; p < 6 * 4; ++p) src.rgb[size_t(p) * 3] = 255, src.rgb[size_t(p) * 3 + 2] = 0;  // R 255, B 0
    Resampler rs;
    std::vector<float> a(3 * 4 * 6), b(3 * 4 * 6);
    rs.crop_resize(src, {0, 0, 4, 6}, 4, 6, false, a.data());
    rs.crop_resize(src, {0, 0, 4, 6}, 4, 6, true, b.data());
    for (int c = 0; c < 3; ++c)
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 6; ++x) CHECK(b[size_t(c * 24 + y * 6 + x)] == a[size_t(c * 24 + y * 6 + 5 - x)]);
    // Same size: the pixels themselves. R = 255 -> (1 - 0.485) / 0.229; B = 0 -> -0.406 / 0.225;
    // G at (x 2, y 3) = 83 -> (83 / 255 - 0.456) / 0.224.
    CHECK(a[0] == doctest::Approx((1 - 0.485) / 0.229).epsilon(1e-6));
    CHECK(a[2 * 24 + 7] == doctest::Approx(-0.406 / 0.225).epsilon(1e-6));
    CHECK(a[24 + 3 * 6 + 2] == doctest::Approx((83 / 255.0 - 0.456) / 0.224).epsilon(1e-6));
}

TEST_CASE("RandomResizedCrop: inside the image, area and aspect in range; the fallback by hand") {
    Rng rng(7);
    int fallbacks = 0;
    for (int i = 0; i < 2000; ++i) {
        int w = 50 + int(rng.next() % 400), h = 50 + int(rng.next() % 400);
        Crop c = random_resized_crop(w, h, rng);
        CHECK(c.top >= 0);
        CHECK(c.left >= 0);
        CHECK(c.top + c.height <= h);
        CHECK(c.left + c.width <= w);
        double area = double(c.width) * c.height / (double(w) * h), aspect = double(c.width) / c.height;
        bool whole = c.width == w || c.height == h;
        if (whole && (area > 0.999 || aspect < 0.74 || aspect > 1.34)) ++fallbacks;
        if (!whole) {
            // Rounding the sides moves the area and aspect a little beyond the drawn ones.
            CHECK(area >= 0.07);
            CHECK(aspect >= 0.7);
            CHECK(aspect <= 1.4);
        }
    }
    CHECK(fallbacks < 200);
    // 1000 x 10 can never hold an allowed aspect inside: the fallback keeps the height and cuts the
    // width to round(10 * 4/3) = 13, centered at (1000 - 13) / 2 = 493.
    Crop f = random_resized_crop(1000, 10, rng);
    CHECK(f.top == 0);
    CHECK(f.height == 10);
    CHECK(f.width == 13);
    CHECK(f.left == 493);
    // 10 x 1000: the width stays, the height is round(10 / (3/4)) = 13 at (1000 - 13) / 2 = 493.
    Crop t = random_resized_crop(10, 1000, rng);
    CHECK(t.width == 10);
    CHECK(t.height == 13);
    CHECK(t.top == 493);
}

TEST_CASE("the validation crop: torchvision's Resize(256) and CenterCrop(224)") {
    CHECK(val_resize(224) == 256);
    CHECK(val_resize(32) == 37);  // 36.57
    // 500 x 375: the height becomes 256, the width int(256 * 500 / 375) = 341; the window's left
    // edge is round((341 - 224) / 2) = round(58.5) = 58 (half to even), its top (256 - 224) / 2 = 16.
    CenterCrop c = center_crop(500, 375, 256, 224);
    CHECK(c.resized_width == 341);
    CHECK(c.resized_height == 256);
    CHECK(c.left == 58);
    CHECK(c.top == 16);
    CenterCrop p = center_crop(300, 451, 256, 224);  // portrait: 256 x int(256 * 451 / 300) = 384
    CHECK(p.resized_height == 384);
    CHECK(p.top == 80);
    CHECK(p.left == 16);
}

TEST_CASE("an image folder: sorted classes, files found recursively in torchvision's order") {
    fs::path d = fresh("folder");
    auto px = [](int, int) { return trainimg::flat(10, 20, 30); };
    write_jpeg(d / "b" / "z.jpg", 8, 8, px);
    write_jpeg(d / "b" / "a.JPEG", 8, 8, px);
    write_jpeg(d / "b" / "sub" / "m.jpg", 8, 8, px);
    write_jpeg(d / "a" / "1.jpeg", 8, 8, px);
    trainimg::write_bytes(d / "a" / "notes.txt", "not an image");
    trainimg::write_bytes(d / "README", "a file beside the classes");
    write_jpeg(d / ".cache" / "x.jpg", 8, 8, px);  // hidden: not a class
    write_jpeg(d / "a" / ".hidden" / "y.jpg", 8, 8, px);
    ImageFolder f = scan_image_folder(d.string());
    CHECK(f.classes == std::vector<std::string>{"a", "b"});
    REQUIRE(f.samples.size() == 4);
    CHECK(f.per_class == std::vector<int64_t>{1, 3});
    CHECK(f.samples[0].path == (d / "a" / "1.jpeg").string());
    CHECK(f.samples[0].label == 0);
    CHECK(f.samples[1].path == (d / "b" / "a.JPEG").string());
    CHECK(f.samples[2].path == (d / "b" / "z.jpg").string());
    CHECK(f.samples[3].path == (d / "b" / "sub" / "m.jpg").string());
    CHECK(f.samples[3].label == 1);
}

TEST_CASE("folder refusals: missing, empty, no classes, an empty class, unreadable files, other val classes") {
    auto refused = [](const std::function<void()>& f, const std::string& says) {
        try {
            f();
            FAIL("accepted");
        } catch (const DataError& e) {
            CHECK_MESSAGE(std::string(e.what()).find(says) != std::string::npos, e.what());
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
        }
    };
    auto px = [](int, int) { return trainimg::flat(1, 2, 3); };
    fs::path root = fresh("refusals");
    refused([&] { scan_dataset((root / "nowhere").string(), false); }, "no such folder");
    fs::create_directories(root / "empty");
    refused([&] { scan_dataset((root / "empty").string(), false); }, "is empty");
    write_jpeg(root / "notrain" / "val" / "a" / "1.jpg", 8, 8, px);
    refused([&] { scan_dataset((root / "notrain").string(), false); }, "has no train/ folder");
    write_jpeg(root / "flat" / "train" / "1.jpg", 8, 8, px);
    refused([&] { scan_dataset((root / "flat").string(), false); }, "has no class folders");
    write_jpeg(root / "hole" / "train" / "a" / "1.jpg", 8, 8, px);
    trainimg::write_bytes(root / "hole" / "train" / "b" / "readme.txt", "no images here");
    refused([&] { scan_dataset((root / "hole").string(), false); }, "train/b has no images");
    write_jpeg(root / "link" / "train" / "a" / "1.jpg", 8, 8, px);
    fs::create_symlink(root / "missing.jpg", root / "link" / "train" / "a" / "2.jpg");
    refused([&] { scan_dataset((root / "link").string(), false); }, "2.jpg cannot be read");
    write_jpeg(root / "dirjpg" / "train" / "a" / "1.jpg", 8, 8, px);
    fs::create_directories(root / "dirjpg" / "train" / "a" / "x.jpg" / "inner");
    write_jpeg(root / "dirjpg" / "train" / "a" / "x.jpg" / "inner" / "2.jpg", 8, 8, px);
    ImageFolder nested = scan_image_folder((root / "dirjpg" / "train").string());  // a folder is walked, not read
    CHECK(nested.samples.size() == 2);
    if (::geteuid() != 0) {  // root reads anything: permissions can only be tested as a user
        write_jpeg(root / "perm" / "train" / "a" / "1.jpg", 8, 8, px);
        fs::permissions(root / "perm" / "train" / "a" / "1.jpg", fs::perms::none);
        refused([&] { scan_dataset((root / "perm").string(), false); }, "Permission denied");
    }
    write_jpeg(root / "val" / "train" / "a" / "1.jpg", 8, 8, px);
    write_jpeg(root / "val" / "train" / "b" / "1.jpg", 8, 8, px);
    refused([&] { scan_dataset((root / "val").string(), true); }, "has no val/ folder");
    write_jpeg(root / "val" / "val" / "a" / "1.jpg", 8, 8, px);
    refused([&] { scan_dataset((root / "val").string(), true); }, "lacks class 'b'");
    write_jpeg(root / "val" / "val" / "b" / "1.jpg", 8, 8, px);
    Dataset ok = scan_dataset((root / "val").string(), true);
    CHECK(ok.val.samples.size() == 2);
}

namespace {
std::vector<Batch> all_batches(const Source& src, int64_t count, int workers) {
    Loader l(src, 0, count, workers, 2 * workers + 1);
    std::vector<Batch> out;
    for (int64_t b = 0; b < count; ++b) out.push_back(l.next());
    return out;
}

void check_same(const std::vector<Batch>& a, const std::vector<Batch>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].labels == b[i].labels);
        CHECK(a[i].x.v == b[i].x.v);
        CHECK(a[i].valid == b[i].valid);
    }
}

// Ten 40 x 30 images in two classes, each a different flat color.
ImageFolder small_folder(const std::string& name, int bad = 0) {
    fs::path d = fresh(name);
    for (int i = 0; i < 10; ++i)
        write_jpeg(d / (i < 5 ? "a" : "b") / cat(i, ".jpg"), 40, 30,
                   [i](int, int) { return trainimg::flat(uint8_t(20 * i), uint8_t(255 - 20 * i), 128); });
    for (int i = 0; i < bad; ++i) trainimg::write_bytes(d / "a" / cat("bad", i, ".jpg"), "garbage, not a JPEG");
    return scan_image_folder(d.string());
}
}  // namespace

TEST_CASE("the loader's batches do not depend on the number of workers") {
    SyntheticSource syn({3, 3, 8, 8}, 10, 5);
    check_same(all_batches(syn, 7, 0), all_batches(syn, 7, 3));
    ImageFolder f = small_folder("loader");
    TrainFolderSource src(f, {4, 3, 16, 16}, 9);
    std::vector<Batch> one = all_batches(src, 6, 0);
    check_same(one, all_batches(src, 6, 2));
    // The stream is epoch after epoch of permutations: the first ten samples hold each image once.
    std::vector<int> labels;
    for (int k = 0; k < 10; ++k) labels.push_back(one[size_t(k / 4)].labels[size_t(k % 4)]);
    CHECK(std::count(labels.begin(), labels.end(), 0) == 5);
    CHECK(std::count(labels.begin(), labels.end(), 1) == 5);
    // Synthetic labels cover the classes; the pixels are normalized uniform draws.
    std::vector<Batch> first = all_batches(syn, 1, 1);
    const Batch& s = first[0];
    for (int32_t l : s.labels) CHECK((l >= 0 && l < 10));
    float lo = *std::min_element(s.x.v.begin(), s.x.v.end()), hi = *std::max_element(s.x.v.begin(), s.x.v.end());
    CHECK(lo >= -0.485f / 0.229f - 1e-5f);
    CHECK(hi <= (1 - 0.406f) / 0.225f + 1e-5f);
}

TEST_CASE("an undecodable file is skipped and counted once; when none decodes, the loader says so") {
    ImageFolder f = small_folder("bad", 2);
    REQUIRE(f.samples.size() == 12);
    TrainFolderSource src(f, {4, 3, 16, 16}, 3);
    std::vector<Batch> b = all_batches(src, 9, 2);  // three epochs: every file is drawn
    CHECK(src.undecodable().count() == 2);
    CHECK(src.undecodable().first().find("bad") != std::string::npos);
    for (const Batch& x : b) CHECK(x.valid == 4);

    fs::path d = fresh("allbad");
    trainimg::write_bytes(d / "a" / "1.jpg", "x");
    trainimg::write_bytes(d / "a" / "2.jpg", "y");
    ImageFolder none = scan_image_folder(d.string());
    TrainFolderSource nsrc(none, {2, 3, 8, 8}, 1);
    for (int workers : {0, 2}) {
        Loader l(nsrc, 0, 3, workers, 5);
        CHECK_THROWS_WITH_AS(l.next(), doctest::Contains("none of the 2 images"), DataError);
    }
}

TEST_CASE("validation batches: each image once, in a fixed order, the last batch padded") {
    ImageFolder f = small_folder("val");
    ValFolderSource src(f, {4, 3, 16, 16});
    CHECK(src.batches() == 3);
    std::vector<Batch> b = all_batches(src, 3, 2);
    CHECK(b[0].valid == 4);
    CHECK(b[2].valid == 2);
    std::vector<int> seen;
    for (const Batch& x : b)
        for (int i = 0; i < x.valid; ++i) seen.push_back(x.labels[size_t(i)]);
    CHECK(std::count(seen.begin(), seen.end(), 0) == 5);
    CHECK(std::count(seen.begin(), seen.end(), 1) == 5);
    check_same(b, all_batches(src, 3, 0));
}
