# Figure 10: counted against analytic per layer type (report/figures/counts.cpp): per type, bars
# of the model's FLOPs, those expected of what ran, and the counted ones, on a log axis; a second
# panel of the model's minimum bytes and the DRAM bytes counted when hasbytes.
width = 0.8 / 3
shift(i) = (i - 2) * width
set linetype 1 lc rgb "#9c9c9c"
set linetype 2 lc rgb "#a0cbe8"
set linetype 3 lc rgb "#4e79a7"
set linetype 4 lc rgb "#f28e2b"
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 (hasbytes ? 1100 : 800)
    if (hasbytes) { set multiplot layout 2, 1 }
    set title title
    set ylabel "FLOPs"
    set logscale y
    set format y "%.0s%c"
    set xrange [-0.6:ntypes - 0.4]
    set style fill solid 0.85 border -1
    set boxwidth width
    set grid ytics lt 1 lw 1 lc rgb "#d8d8d8"
    set xtics rotate by -30 left nomirror scale 0
    set key top right box opaque
    plot dat using 0:(NaN):xtic(1) notitle, \
         dat using ($0 + shift(1)):2 with boxes lt 1 title "analytic", \
         dat using ($0 + shift(2)):3 with boxes lt 2 title "expected of what ran", \
         dat using ($0 + shift(3)):4 with boxes lt 3 title "counted"
    if (hasbytes) {
        set title "Bytes: the model's minimum and DRAM counted"
        set ylabel "bytes"
        set boxwidth 0.8 / 2
        plot dat using 0:(NaN):xtic(1) notitle, \
             dat using ($0 - 0.2):5 with boxes lt 1 title "analytic minimum", \
             dat using ($0 + 0.2):6 with boxes lt 4 title "DRAM read + write counted"
        unset multiplot
    }
}
