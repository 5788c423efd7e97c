# plot.gp — throughput and claim latency against queue depth, from the
# depth.tsv that emqlite-bench --out writes (columns: system sync pending
# cycles_per_s claim_p50_us claim_p99_us claim_mean_us bytes_per_job rss_kb
# server_rss_kb). Call: gnuplot -e "tsv='...'; png='...'" plot.gp
if (!exists("tsv")) tsv = 'bench-results/depth.tsv'
if (!exists("png")) png = 'bench-results/bench.png'
set terminal pngcairo size 1400,560 font ",11" noenhanced
set output png
set datafile separator "\t"
set logscale x 10
set format x "%.0s%c"
set grid
set key top right
sel(s, y) = sprintf("< awk -F'\t' '$1==\"%s\" && $2==\"%s\"' %s", s, y, tsv)
set style line 1 lc rgb "#1f77b4" lw 2 pt 7
set style line 2 lc rgb "#2ca02c" lw 2 pt 5
set style line 3 lc rgb "#d62728" lw 2 pt 9
set multiplot layout 1,2 title "emqlite vs raw SQL vs redis-server + Lua bundle (solid: sync NORMAL / no persistence; dashed: FULL / appendfsync always)"
set title "full cycles per second at a fixed queue depth"
set xlabel "pending jobs"
set ylabel "cycles/s (enqueue + claim + complete)"
set logscale y 10
plot sel("emqlite","NORMAL") u 3:4 w lp ls 1 t "emqlite", \
     sel("raw","NORMAL") u 3:4 w lp ls 2 t "raw SQL", \
     sel("peer","NORMAL") u 3:4 w lp ls 3 t "peer (1 CPU)", \
     sel("emqlite","FULL") u 3:4 w lp ls 1 dt 2 t "emqlite FULL", \
     sel("raw","FULL") u 3:4 w lp ls 2 dt 2 t "raw SQL FULL", \
     sel("peer","FULL") u 3:4 w lp ls 3 dt 2 t "peer AOF always"
set title "claim latency at a fixed queue depth (p50; bars to p99)"
set ylabel "µs"
plot sel("emqlite","NORMAL") u 3:5:5:6 w yerrorlines ls 1 t "emqlite", \
     sel("raw","NORMAL") u 3:5:5:6 w yerrorlines ls 2 t "raw SQL", \
     sel("peer","NORMAL") u 3:5:5:6 w yerrorlines ls 3 t "peer (1 CPU)", \
     sel("emqlite","FULL") u 3:5 w lp ls 1 dt 2 t "emqlite FULL", \
     sel("raw","FULL") u 3:5 w lp ls 2 dt 2 t "raw SQL FULL", \
     sel("peer","FULL") u 3:5 w lp ls 3 dt 2 t "peer AOF always"
unset multiplot
