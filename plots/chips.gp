# Figure 1: datasheet rooflines (report/figures/chips.cpp). Colours 1-5 are the kinds of chip
# (the mixed figure), 6-13 tell apart the roofs of one figure (the chips of one kind, or the
# precisions of one chip). Each roof's label sits right of the plot, joined to the roof's end by a
# dotted leader line. The y unit (TFLOP/s, or TOP/s for int8) comes with the data.
set linetype 1 lc rgb "#1f77b4" lw 2
set linetype 2 lc rgb "#2ca02c" lw 2
set linetype 3 lc rgb "#d62728" lw 2
set linetype 4 lc rgb "#9467bd" lw 2
set linetype 5 lc rgb "#8c564b" lw 2
set linetype 6 lc rgb "#1f77b4" lw 2
set linetype 7 lc rgb "#ff7f0e" lw 2
set linetype 8 lc rgb "#2ca02c" lw 2
set linetype 9 lc rgb "#d62728" lw 2
set linetype 10 lc rgb "#9467bd" lw 2
set linetype 11 lc rgb "#8c564b" lw 2
set linetype 12 lc rgb "#e377c2" lw 2
set linetype 13 lc rgb "#7f7f7f" lw 2
# The legend's kinds: gnuplot evaluates a plot's options even for an empty iteration, so both
# functions answer something harmless past the list's end.
kind_lt(i) = i <= words(kinds) ? int(word(kinds, i)) : 1
kind_title(i) = i <= words(kinds) ? value("kind_title_".word(kinds, i)) : ""
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    set title title
    set logscale xy
    set xrange [xmin:xmax]
    set yrange [ymin:ymax]
    set format x "%g"
    set format y "%g"
    set xlabel "operational intensity (FLOP/byte)"
    set ylabel ylabel
    set grid xtics ytics mxtics mytics lt 1 lw 1 lc rgb "#d8d8d8", lt 1 lw 1 lc rgb "#ececec"
    set rmargin label_chars + 3
    set key top left Left reverse box opaque width 1 samplen 3
    if (words(kinds) == 0) { unset key }
    plot dat index 0 using 1:2:3 with lines lc variable notitle, \
         dat index 2 using 1:2:3 with lines dt 3 lw 1 lc variable notitle, \
         dat index 1 using 1:2:3 with points pt 7 ps 0.9 lc variable notitle, \
         dat index 3 using 1:2:4:3 with labels left offset 0.6,0 tc variable notitle, \
         for [i=1:words(kinds)] NaN with lines lt kind_lt(i) title kind_title(i)
}
