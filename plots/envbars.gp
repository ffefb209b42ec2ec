# ridge compare: one figure of grouped bars (report/figures/compare.cpp), one group per row of the
# data (a net, or a configuration of one net), one bar per environment in the environment's own
# colour; the error bar spans the repeats' min to max. Columns: label, then mean, min, max per bar.
# A missing value is NaN and draws nothing.
width = 0.8 / nbars
shift(i) = (i - (nbars + 1) / 2.0) * width
bar_label(v) = v != v ? "" : v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : sprintf("%.2f", v)
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    set title title
    set ylabel ylabel
    set xrange [-0.6:ngroups - 0.4]
    if (logy) { set logscale y; set yrange [ymin:ymax] } else { set yrange [0:*] }
    set offsets 0, 0, graph 0.1, 0
    set style fill solid 0.85 border -1
    set boxwidth width
    set grid ytics lt 1 lw 1 lc rgb "#d8d8d8"
    if (ngroups > 6) { set xtics rotate by -30 left nomirror scale 0 } else { set xtics norotate nomirror scale 0 }
    # Above the plot: names of environments are long, and a key at the side would narrow it.
    set key outside top center horizontal maxcols 2 Left reverse box opaque width 1
    plot dat using 0:(NaN):xtic(1) notitle, \
         for [i=1:hline] 1 with lines lc rgb "black" dt 2 lw 1.5 title "baseline", \
         for [i=1:nbars] dat using ($0 + shift(i)):(column(3 * i - 1)) with boxes lc rgb value("bar_color_".i) title value("bar_title_".i), \
         for [i=1:nbars] dat using ($0 + shift(i)):(column(3 * i - 1)):(column(3 * i)):(column(3 * i + 1)) with yerrorbars lc rgb "black" pt 0 ps 0 notitle, \
         for [i=1:nbars] dat using ($0 + shift(i)):(column(3 * i + 1)):(bar_label(column(3 * i - 1))) with labels offset 0,0.7 font ",9" notitle
}
