# Per net, clustered bars of backward / forward: the analytic FLOPs ratio, then the measured time
# ratio on each device that has a training run; a dashed line at 2. Each bar carries its value
# while they are wide enough to hold it.
nbars = 1 + hascpu + hasgpu
width = 0.8 / nbars
left(j) = -0.4 + width * (j + 0.5)
cpu_at = 1
gpu_at = 1 + hascpu
values = nnets * nbars <= 30
value_text(v) = sprintf("%.2f", v)
set title title font ",14"
set ylabel "backward / forward"
set xrange [-0.6:nnets - 0.4]
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set xtics nomirror scale 0
set ytics nomirror
set grid ytics lc rgb "#dddddd"
set style fill solid 0.85 noborder
set boxwidth width
set key outside bottom center horizontal box opaque spacing 1.2 width 2 samplen 4
set bmargin 5
# The values sit on an opaque box so that the line at 2 does not strike through them.
set style textbox opaque noborder margins 1, 1
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    plot dat using 0:(NaN):xtic(1) notitle, \
         dat using ($0 + left(0)):2 with boxes lc rgb "#9c9c9c" title "analytic FLOPs", \
         for [d=1:hascpu] dat using ($0 + left(cpu_at)):3 with boxes lc rgb "#4e79a7" title "measured time, CPU", \
         for [d=1:hasgpu] dat using ($0 + left(gpu_at)):4 with boxes lc rgb "#59a14f" title "measured time, GPU", \
         2 with lines dt 2 lw 1.5 lc rgb "gray20" title "rule of thumb: 2", \
         for [d=1:values] dat using ($0 + left(0)):2:(value_text($2)) with labels boxed offset 0, 0.8 notitle, \
         for [d=1:values*hascpu] dat using ($0 + left(cpu_at)):3:(value_text($3)) with labels boxed offset 0, 0.8 notitle, \
         for [d=1:values*hasgpu] dat using ($0 + left(gpu_at)):4:(value_text($4)) with labels boxed offset 0, 0.8 notitle
}
