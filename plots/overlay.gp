# Figure 3: nets' forward intensity on this machine's roofs (report/figures/overlay.cpp). Each
# net's label is written upward or downward from its point, as the data file's side column says.
load plots.'/roofline_style.gp'
set style textbox opaque noborder margins 1,1
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    set title title
    set xrange [xmin:xmax]
    set yrange [ymin:ymax]
    set ylabel "attainable performance (".yunit.")"
    set key bottom right Left reverse box opaque width 1
    plot dat index 0 with lines ls 101 title measured_title, \
         for [i=1:has_datasheet] dat index 1 with lines ls 102 title datasheet_title, \
         dat index nets_index using 1:($4 == 1 ? $2 : NaN):3 with points pt 7 ps 1.6 lc variable notitle, \
         dat index nets_index using 1:($4 == 2 ? $2 : NaN):3 with points pt 5 ps 1.6 lc variable notitle, \
         dat index nets_index using 1:($5 > 0 ? $2 : NaN):6:3 with labels boxed rotate by 90 left offset 0,1.2 tc variable notitle, \
         dat index nets_index using 1:($5 < 0 ? $2 : NaN):6:3 with labels boxed rotate by 90 right offset 0,-1.2 tc variable notitle, \
         NaN with points pt 7 ps 1.6 lc rgb "black" title "batch 1", \
         NaN with points pt 5 ps 1.6 lc rgb "black" title sprintf("batch %d", large_batch)
}
