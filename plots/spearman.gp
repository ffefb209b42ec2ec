# Spearman's rank correlation between pairs of quantities as a heatmap with the value in each
# cell; rows read top-down in the order of the columns, so the diagonal runs top-left to bottom-right.
set title title font ",14"
unset key
set size ratio -1
set xrange [-0.5:n-0.5]
set yrange [-0.5:n-0.5]
set xtics () rotate by 30 right nomirror scale 0
set ytics () nomirror scale 0
do for [i=0:n-1] {
    set xtics add (value("label".i) i)
    set ytics add (value("label".i) n-1-i)
}
set cbrange [-1:1]
set cbtics 0.5
set cblabel "Spearman's rho"
# Blue for reversed order, white for none, red for the same order (ColorBrewer RdBu).
set palette defined (-1 "#2166ac", -0.5 "#92c5de", 0 "#f7f7f7", 0.5 "#f4a582", 1 "#b2182b")
# White text on the dark cells. An undefined rho (NaN) leaves its cell blank and its "n/a" grey.
ink(r) = abs(r) > 0.6 ? 0xffffff : 0x000000
set lmargin 22
set bmargin 10
do for [fmt in "png svg"] {
    call plots.'/terminal.gp' fmt 1200 800
    plot dat using 2:(n-1-$1):3 with image, \
         dat using 2:(n-1-$1):4:(ink($3)) with labels textcolor rgb variable font ",13"
}
