# ridge compare: every environment's roofs on one figure, each in its own colour (measured solid,
# datasheet dashed), and each environment's runs as points on its own roof
# (report/figures/compare.cpp). Point type: the kind of run (column 3 of a points block).
set logscale xy
set format x "%g"
set format y "%g"
set grid xtics ytics mxtics mytics lt 1 lw 1 lc rgb "#d8d8d8", lt 1 lw 1 lc rgb "#ececec"
set xlabel "operational intensity (FLOP/byte)"
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    set title title
    set xrange [xmin:xmax]
    set yrange [ymin:ymax]
    set ylabel "achieved performance (".yunit.")"
    # Above the plot: names of environments are long, and a key at the side would narrow it.
    set key outside top center horizontal maxcols 2 Left reverse box opaque width 1
    plot for [k=1:nroofs] dat index value("roof_index_".k) with lines lw 2 dt value("roof_dt_".k) \
             lc rgb value("roof_color_".k) title value("roof_title_".k), \
         for [k=1:npoints] dat index value("points_index_".k) using 1:2:3 with points pt variable ps 1.6 \
             lc rgb value("points_color_".k) notitle, \
         keyentry with points pt 7 ps 1.6 lc rgb "black" title "inference", \
         for [i=1:has_train_step] keyentry with points pt 9 ps 1.6 lc rgb "black" title "training step (bench)", \
         for [i=1:has_train_run] keyentry with points pt 3 ps 1.6 lc rgb "black" title "training run (ridge train)"
}
