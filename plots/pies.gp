# Six pies of one net by layer type: columns latency, FLOPs, memory; rows forward, backward.
# gnuplot has no pie style: each slice is a `circles` wedge (x:y:radius:start:end angles, in
# degrees counter-clockwise from +x), drawn clockwise from twelve o'clock. Each type keeps its
# colour in all six pies and one legend names them.
# Indexed by Category (engine/op.h), then "other" and an empty pie.
array colors[14] = [0x4e79a7, 0xa0cbe8, 0xf28e2b, 0xffbe7d, 0x59a14f, 0xe15759, 0xb6992d, \
                    0x76b7b2, 0xb07aa1, 0xff9da7, 0x9c755f, 0xd4a6c8, 0xbab0ac, 0xeeeeee]
color(c) = colors[int(c) + 1]
color_name(c) = sprintf("#%06x", color(c))
cx(p) = 2.9 * int(p / 2)
cy(p) = -3.0 * (p % 2)
a1(start, share) = 90 - 3.6 * (start + share)
a2(start) = 90 - 3.6 * start
set angles degrees
mid(start, share) = (a1(start, share) + a2(start)) / 2
# Wide slices carry their share inside; thin ones just outside the rim, running away from it
# (left-aligned on the right half, right-aligned on the left).
inside(share) = share >= 8
outside(share, side) = !inside(share) && (side > 0 ? cos(mid(column(3), share)) >= 0 : cos(mid(column(3), share)) < 0)
set title title font ",14"
unset border
unset tics
set size ratio -1
set xrange [-1.45:cx(4) + 1.45]
set yrange [cy(1) - 1.3:1.75]
set lmargin 1
set tmargin 3
set bmargin 1
set style fill solid 1 border lc rgb "white"
set key outside right center box opaque spacing 1.4 width 1 title "layer type"
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    unset label
    do for [p=0:5] {
        set label p + 1 value("pie".p)."\n".value("total".p) at cx(p), cy(p) + 1.42 center font ",11"
    }
    plot for [p=0:5] dat index p using (cx(p)):(cy(p)):(1):(a1($3, $2)):(a2($3)):(color($1)) \
             with circles fc rgb variable notitle, \
         for [p=0:5] dat index p using (cx(p) + 0.62 * cos(mid($3, $2))):(cy(p) + 0.62 * sin(mid($3, $2))): \
             (inside($2) ? stringcolumn(4) : "") with labels center notitle, \
         for [p=0:5] dat index p using (cx(p) + 1.06 * cos(mid($3, $2))):(cy(p) + 1.1 * sin(mid($3, $2))): \
             (outside($2, 1) ? stringcolumn(4) : "") with labels left font ",9" notitle, \
         for [p=0:5] dat index p using (cx(p) + 1.06 * cos(mid($3, $2))):(cy(p) + 1.1 * sin(mid($3, $2))): \
             (outside($2, -1) ? stringcolumn(4) : "") with labels right font ",9" notitle, \
         for [k=0:ncat-1] keyentry with boxes fc rgb color_name(value("cat".k)) title value("catname".k)
}
