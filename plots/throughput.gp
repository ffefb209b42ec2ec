# Inference throughput against batch size, a line per net and device (CPU solid, GPU dashed);
# the legend names each net once and each dash style once.
# Tableau 10; past ten nets the colours repeat with another point type.
colors = "#4e79a7 #f28e2b #e15759 #76b7b2 #59a14f #edc948 #b07aa1 #ff9da7 #9c755f #bab0ac"
net_color(k) = word(colors, k % 10 + 1)
net_pt(k) = 7 + 2 * int(k / 10)
set title title font ",14"
set xlabel "batch size (images)"
set ylabel "throughput (images/s)"
set logscale x 2
set logscale y
set format y "%.0s%c"
set grid xtics ytics lc rgb "#dddddd"
set key outside right top box opaque spacing 1.2
set offsets graph 0.03, graph 0.03, 0, 0
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    plot for [i=0:nseries-1] dat index i using 1:2 with linespoints notitle lw 2 \
             pt net_pt(value("net".i)) ps 1.1 dt 1 + value("gpu".i) lc rgb net_color(value("net".i)), \
         for [k=0:nnets-1] keyentry with linespoints lw 2 pt net_pt(k) lc rgb net_color(k) title value("name".k), \
         keyentry with lines lw 2 dt 1 lc rgb "black" title "CPU", \
         for [g=1:hasgpu] keyentry with lines lw 2 dt 2 lc rgb "black" title "GPU"
}
