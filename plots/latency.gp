# Inference latency of every run against a per-image count of its net (latency-flops,
# latency-params), log-log: a colour per batch size, a point type per device, each net named
# once above its column of points.
# A distinct colour per batch size, in batch order; past eight batch sizes they repeat.
colors = "#1b9e77 #4575b4 #7b3294 #d73027 #f46d43 #fdae61 #66bd63 #1a1a1a"
batch_color(b) = word(colors, b % 8 + 1)
device_pt(g) = g ? 9 : 7
set title title font ",14"
set xlabel xlabel
set ylabel "latency (ms, median of the inference step)"
set logscale xy
set format x "%g"
set format y "%g"
# The counts span a decade or two: label 2 and 5 of every decade too.
do for [e=-3:4] { set xtics add (2 * 10**e, 5 * 10**e) }
set grid xtics ytics lc rgb "#dddddd"
set key outside right top box opaque spacing 1.2
# Fixed to the data (log autoscaling would round out to whole decades), then headroom above the
# columns for the rotated names and a margin either side.
set autoscale fix
set offsets graph 0.06, graph 0.06, graph 0.25, graph 0.06
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    plot for [i=0:nseries-1] dat index i using 2:3 with points notitle \
             pt device_pt(value("gpu".i)) ps 1.6 lc rgb batch_color(value("batch".i)), \
         dat index nseries using 2:3:1 with labels rotate by 90 left offset 0, 1.2 notitle, \
         for [b=0:nbatches-1] keyentry with points pt 5 ps 1.6 lc rgb batch_color(b) title value("batchname".b), \
         keyentry with points pt device_pt(0) ps 1.6 lc rgb "gray40" title "CPU", \
         for [g=1:hasgpu] keyentry with points pt device_pt(1) ps 1.6 lc rgb "gray40" title "GPU"
}
