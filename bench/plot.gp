# plot.gp — throughput and claim latency against queue depth, from the
# depth.tsv that emqlite-bench --out writes (columns: system sync pending
# cycles_per_s claim_p50_us claim_p99_us claim_mean_us bytes_per_job rss_kb
# server_rss_kb). Call: gnuplot -e "tsv='...'; png='...'" plot.gp
if (!exists("tsv")) tsv = 'bench-results/depth.tsv'
if (!exists("png")) png = 'bench-results/bench.png'
set terminal pngcairo size 1800,640 font ",11" noenhanced
set output png
set datafile separator "\t"
set logscale x 10
set logscale y 10
set xrange [500:2000000]
set format x "%.0s%c"
set grid
set xlabel "pending jobs (queue depth)"
sel(s, y) = sprintf("< awk -F'\t' '$1==\"%s\" && $2==\"%s\"' '%s'", s, y, tsv)
set style line 1 lc rgb "#1f77b4" lw 2 pt 7 ps 1.2
set style line 2 lc rgb "#2ca02c" lw 2 pt 5 ps 1.2
set style line 3 lc rgb "#d62728" lw 2 pt 9 ps 1.4
set multiplot layout 1,3 title "emqlite vs raw SQL vs redis-server + Lua bundle, steady cycles at a fixed depth (solid: synchronous NORMAL / no persistence; dashed: FULL / appendfsync always)"
set title "full cycles per second (enqueue + claim + complete)"
set ylabel "cycles/s"
set key below maxrows 2
plot sel("emqlite","NORMAL") u 3:4 w lp ls 1 t "emqlite", \
     sel("raw","NORMAL") u 3:4 w lp ls 2 t "raw SQL", \
     sel("peer","NORMAL") u 3:4 w lp ls 3 t "peer, 1 CPU", \
     sel("emqlite","FULL") u 3:4 w lp ls 1 dt 2 t "emqlite FULL", \
     sel("raw","FULL") u 3:4 w lp ls 2 dt 2 t "raw SQL FULL", \
     sel("peer","FULL") u 3:4 w lp ls 3 dt 2 t "peer AOF always"
set title "claim latency p50"
set ylabel "µs"

plot sel("emqlite","NORMAL") u 3:5 w lp ls 1 t "emqlite", \
     sel("raw","NORMAL") u 3:5 w lp ls 2 t "raw SQL", \
     sel("peer","NORMAL") u 3:5 w lp ls 3 t "peer, 1 CPU", \
     sel("emqlite","FULL") u 3:5 w lp ls 1 dt 2 t "emqlite FULL", \
     sel("raw","FULL") u 3:5 w lp ls 2 dt 2 t "raw SQL FULL", \
     sel("peer","FULL") u 3:5 w lp ls 3 dt 2 t "peer AOF always"
set title "claim latency p99"
plot sel("emqlite","NORMAL") u 3:6 w lp ls 1 t "emqlite", \
     sel("raw","NORMAL") u 3:6 w lp ls 2 t "raw SQL", \
     sel("peer","NORMAL") u 3:6 w lp ls 3 t "peer, 1 CPU", \
     sel("emqlite","FULL") u 3:6 w lp ls 1 dt 2 t "emqlite FULL", \
     sel("raw","FULL") u 3:6 w lp ls 2 dt 2 t "raw SQL FULL", \
     sel("peer","FULL") u 3:6 w lp ls 3 dt 2 t "peer AOF always"
unset multiplot
