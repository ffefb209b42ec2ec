# Shared by overlay.gp and measured.gp so a device's roofs and a net's colour look the same in
# every figure: the measured roof solid, the datasheet roof dashed; nets take linetypes 1-10.
set style line 101 lc rgb "black" lw 2.5
set style line 102 lc rgb "#666666" lw 2 dt 2
set linetype 1 lc rgb "#1f77b4" lw 1.5
set linetype 2 lc rgb "#ff7f0e" lw 1.5
set linetype 3 lc rgb "#2ca02c" lw 1.5
set linetype 4 lc rgb "#d62728" lw 1.5
set linetype 5 lc rgb "#9467bd" lw 1.5
set linetype 6 lc rgb "#8c564b" lw 1.5
set linetype 7 lc rgb "#e377c2" lw 1.5
set linetype 8 lc rgb "#7f7f7f" lw 1.5
set linetype 9 lc rgb "#bcbd22" lw 1.5
set linetype 10 lc rgb "#17becf" lw 1.5
set linetype 20 lc rgb "black" lw 1.5
set logscale xy
set format x "%g"
set format y "%g"
set grid xtics ytics mxtics mytics lt 1 lw 1 lc rgb "#d8d8d8", lt 1 lw 1 lc rgb "#ececec"
set xlabel "operational intensity (FLOP/byte)"
