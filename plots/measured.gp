# Figure 7: measured points over a device's roofs (report/figures/measured.cpp). One index block
# per series (a mark type); the third column is each point's colour. Runs are coloured by net,
# named in a second legend; layers are coloured by their series.
load plots.'/roofline_style.gp'
# gnuplot evaluates a plot's options even for an empty iteration, hence the guards.
series_pt(i) = i <= nseries ? value("series_pt_".i) : 7
series_lt(i) = i <= nseries ? value("series_lt_".i) : 20
series_title(i) = i <= nseries ? value("series_title_".i) : ""
colour_title(j) = j <= ncolours ? value("colour_title_".j) : ""
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    set title title
    set xrange [xmin:xmax]
    set yrange [ymin:ymax]
    set ylabel "achieved performance (".yunit.")"
    # Below the plot, clear of the data; gnuplot would draw a "below" key over the x label. The
    # roof titles are long enough that gnuplot fits only two columns at this width.
    set bmargin 5 + ceil((1 + has_datasheet + nseries + ncolours) / 2.0)
    set key at screen 0.5, screen 0.01 bottom center horizontal Left reverse width 2 maxcols 3
    plot dat index 0 with lines ls 101 title measured_title, \
         for [i=1:has_datasheet] dat index 1 with lines ls 102 title datasheet_title, \
         for [i=1:nseries] dat index (first_series + i - 1) using 1:2:3 with points pt series_pt(i) ps 1.5 lc variable notitle, \
         for [i=1:nseries] NaN with points pt series_pt(i) ps 1.5 lt series_lt(i) title series_title(i), \
         for [j=1:ncolours] NaN with points pt 7 ps 1.5 lt j title colour_title(j)
}
