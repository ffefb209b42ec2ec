# The terminal and output file of one format, shared by every script so all figures look alike:
#     do for [fmt in "png svg"] { call plots.'/terminal.gp' fmt 1200 800; ...plot... }
# Each script draws once per format (a multiplot cannot be replotted). Text is not enhanced:
# net and layer names contain '_', which enhanced mode would read as a subscript.
if (ARG1 eq "png") {
    set terminal pngcairo size int(ARG2), int(ARG3) font "DejaVu Sans,11" noenhanced
} else {
    set terminal svg size int(ARG2), int(ARG3) font "DejaVu Sans,11" noenhanced dynamic background "white"
}
set output out.".".ARG1
