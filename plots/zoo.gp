# Figure 2: the zoo's counts as bars (report/figures/zoo.cpp), one group per net, one bar per
# series (nseries, 1 or 2), each bar with its value written above it.
set linetype 1 lc rgb "#1f77b4"
set linetype 2 lc rgb "#ff7f0e"
bar_label(v) = v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : sprintf("%.2f", v)
width = 0.8 / nseries
shift(i) = (i - (nseries + 1) / 2.0) * width
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    set title title
    set ylabel ylabel
    set xrange [-0.6:nnets - 0.4]
    set yrange [0:*]
    set offsets 0, 0, graph 0.1, 0
    set style fill solid 0.85 border -1
    set boxwidth width
    set grid ytics lt 1 lw 1 lc rgb "#d8d8d8"
    if (nnets > 8) { set xtics rotate by -30 left nomirror scale 0 } else { set xtics norotate nomirror scale 0 }
    set key top left Left reverse box opaque width 1
    if (nseries == 1) { unset key }
    plot dat using 0:(NaN):xtic(1) notitle, \
         for [i=1:nseries] dat using ($0 + shift(i)):(column(i + 1)) with boxes lt i title value("series_".i), \
         for [i=1:nseries] dat using ($0 + shift(i)):(column(i + 1)):(bar_label(column(i + 1))) with labels offset 0,0.7 font ",10" notitle
}
