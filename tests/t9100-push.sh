#!/bin/sh
# rsprof push FILE URL to loopback stores that implement Pyroscope's ingest
# and Connect APIs, Parca's WriteRaw gateway and OTLP/HTTP profiles
# (tests/push-receiver.py): every profile is read by the real `go tool
# pprof -raw` and passes Parca's validation rules, every interval arrives
# once, and the totals are report's to the sample (CPU samples, samples of
# the hottest line, allocations, live bytes at the end). A second push sends
# nothing (the profile's ledger); --window sends one window again; labels,
# credentials and tenant reach the store; bad arguments are exit 2.
. "$(dirname "$0")/lib.sh"
. "$TEST_SRC/push-lib.sh"

if ! have_perf; then
	test_skip 'rsprof push' 'perf events not allowed here (nothing to record)'
	test_done
fi

HOT_A=$(grep -n "/\* HOT:a \*/" "$TOP/tests/targets/cpu_split.c" | cut -d: -f1)
PUSH="--push-interval 1s --push-spool $TEST_DIR/spool -q"

test_expect_success 'record a CPU target and a heap target' '
	"$RSPROF" record -q -F 499 -i 250ms -o cpu.db -- "$TARGETS/cpu_split" 2 &&
	"$RSPROF" record -q -i 250ms --no-cpu -o heap.db -- "$TARGETS/heap_paced" 150000 100000 \
		>/dev/null &&
	test "$(total_of cpu.db cpu.total_samples)" -gt 400 &&
	test "$(total_of heap.db summary.alloc_count)" -gt 50000
'

# the report's samples at a line, from its JSON rows
report_line() {	# FILE FUNCTION LINE
	"$RSPROF" report --json --cpu -n 50 "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(r["samples"] for r in d["cpu"]["rows"]
          if r["function"] == sys.argv[1] and r["line"] == int(sys.argv[2])))' "$2" "$3"
}

for fmt in pyroscope pyroscope-connect parca otlp; do
	start_receiver r.$fmt
	test_expect_success "$fmt: every interval once, report's totals to the sample" '
		"$RSPROF" push $PUSH --push-format '$fmt' cpu.db http://127.0.0.1:$RPORT &&
		"$RSPROF" push $PUSH --push-format '$fmt' heap.db http://127.0.0.1:$RPORT &&
		pcheck r.'$fmt' errors && pcheck r.'$fmt' dups &&
		test "$(pcheck r.'$fmt' total samples/count)" = "$(total_of cpu.db cpu.total_samples)" &&
		test "$(pcheck r.'$fmt' leaf samples/count work_a:$HOT_A)" = \
		     "$(report_line cpu.db work_a $HOT_A)" &&
		test "$(pcheck r.'$fmt' total alloc_objects/count)" = \
		     "$(total_of heap.db summary.alloc_count)" &&
		test "$(pcheck r.'$fmt' last inuse_space/bytes)" = \
		     "$(total_of heap.db heap.total_live_bytes)"
	'
	stop_receiver
done

test_expect_success 'pyroscope: the ingest query, sample_type_config, labels' '
	python3 - r.pyroscope/log.jsonl "$(hostname)" <<-\EOF
	import json, sys
	recs = [json.loads(l) for l in open(sys.argv[1])]
	for r in recs:
	    assert r["spyName"] == "rsprof", r
	    assert r["until"] > r["from"], r
	    assert r["labels"]["hostname"] == sys.argv[2], r
	    assert r["labels"]["service_name"] in ("cpu_split", "heap_paced"), r
	    cfg = r["sample_type_config"]
	    if "alloc_space" in cfg:
	        assert cfg["alloc_space"]["cumulative"] is False, cfg
	    else:
	        assert cfg["samples"]["display-name"] == "cpu", cfg
	EOF
'

test_expect_success 'connect and parca: __name__, __delta__, normalized' '
	pcheck r.pyroscope-connect labels >c.labels &&
	grep -q "\"__name__\": \"process_cpu\"" c.labels &&
	grep -q "\"__name__\": \"memory\"" c.labels &&
	grep -q "\"__delta__\": \"false\"" c.labels &&
	pcheck r.parca labels | grep -q "\"__name__\": \"process_cpu\"" &&
	pcheck r.parca field normalized | sort -u | grep -qx True
'

test_expect_success 'otlp: resource attributes and the four heap types' '
	pcheck r.otlp labels >o.labels &&
	grep -q "\"service.name\": \"cpu_split\"" o.labels &&
	grep -q "\"process.executable.name\": \"heap_paced\"" o.labels &&
	test "$(pcheck r.otlp total inuse_objects/count)" -gt 0 &&
	test "$(pcheck r.otlp total alloc_space/bytes)" -gt 0
'

if command -v go >/dev/null; then
	test_expect_success 'every pprof received reads with go tool pprof -raw' '
		n=0 &&
		for f in $(pcheck r.pyroscope files; pcheck r.pyroscope-connect files;
			   pcheck r.parca files); do
			go tool pprof -raw "$f" >raw.out 2>raw.err || { cat raw.err; exit 1; }
			n=$((n + 1))
		done &&
		test $n -ge 8 &&
		go tool pprof -raw "$(pcheck r.parca files | head -1)" >raw.out &&
		grep -q "work_a .*cpu_split.c:$HOT_A" raw.out &&
		grep -q "^samples/count cpu/nanoseconds" raw.out
	'
else
	test_skip 'go tool pprof -raw' 'golang-go missing (scripts/packages.txt, test group)'
fi

start_receiver r.again
AGAIN=$RPORT
test_expect_success 'a second push sends nothing: the ledger has every request' '
	"$RSPROF" push $PUSH cpu.db http://127.0.0.1:$RPORT &&
	n=$(pcheck r.again count) &&
	test "$n" -gt 1 &&
	test "$(sql cpu.db "SELECT COUNT(*) FROM pushes WHERE state = '"'pushed'"'
		AND store LIKE '"'%:$RPORT/ingest'"'")" = "$n" &&
	"$RSPROF" push --push-spool spool cpu.db http://127.0.0.1:$RPORT 2>second.err &&
	cat second.err &&
	grep -q "0 profiles pushed" second.err &&
	test "$(pcheck r.again count)" = "$n"
'

test_expect_success '--window: that window again, as one profile' '
	n=$(pcheck r.again count) &&
	"$RSPROF" push $PUSH --window 0..1s cpu.db http://127.0.0.1:$RPORT &&
	test "$(pcheck r.again count)" = $((n + 1)) &&
	test "$(sql cpu.db "SELECT COUNT(*) FROM pushes WHERE interval_ms = 0 AND
		from_ms = 0 AND to_ms = 1000")" = 1
'
stop_receiver

start_receiver r.auth
test_expect_success 'labels, Basic and Bearer credentials, the tenant' '
	pid=$(sql cpu.db "SELECT value FROM meta WHERE key = '"'pid'"'") &&
	"$RSPROF" push $PUSH --window ..1s --label env=test --label service_name=svc \
		--push-user alice:s3cret --push-tenant acme cpu.db http://127.0.0.1:$RPORT &&
	RSPROF_PUSH_TOKEN=tok "$RSPROF" push $PUSH --window ..1s cpu.db \
		http://127.0.0.1:$RPORT &&
	pcheck r.auth labels >a.labels &&
	grep -q "\"env\": \"test\"" a.labels &&
	grep -q "\"service_name\": \"svc\"" a.labels &&
	grep -q "\"pid\": \"$pid\"" a.labels &&
	pcheck r.auth field auth >a.auth &&
	grep -qx "Basic $(printf alice:s3cret | base64)" a.auth &&
	grep -qx "Bearer tok" a.auth &&
	pcheck r.auth field tenant | grep -qx acme
'
stop_receiver

# a container's process, as a runtime names its cgroup
CID=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
start_receiver r.cg
test_expect_success 'cgroup_name and container_id from the processes table' '
	cp cpu.db cg.db &&
	sql cg.db "DELETE FROM pushes;
		UPDATE processes SET cgroup = '"'/system.slice/docker-$CID.scope'"'" &&
	"$RSPROF" push $PUSH --window ..1s cg.db http://127.0.0.1:$RPORT &&
	"$RSPROF" push $PUSH --window ..1s --push-format otlp cg.db http://127.0.0.1:$RPORT &&
	"$RSPROF" push $PUSH --window ..1s --push-format parca cg.db http://127.0.0.1:$RPORT &&
	pcheck r.cg labels >cg.labels &&
	cat cg.labels &&
	test "$(grep -c "\"cgroup_name\": \"/system.slice/docker-$CID.scope\"" cg.labels)" = 3 &&
	test "$(grep -c "\"container_id\": \"$CID\"" cg.labels)" = 2 &&
	grep -q "\"container.id\": \"$CID\"" cg.labels
'

test_expect_success 'no container_id for a cgroup that names none, no cgroup_name for NULL' '
	sql cg.db "DELETE FROM pushes; UPDATE processes SET cgroup = '"'/user.slice/session-4.scope'"'" &&
	"$RSPROF" push $PUSH --window ..1s cg.db http://127.0.0.1:$RPORT &&
	pcheck r.cg labels | tail -1 >cg2.labels &&
	grep -q "\"cgroup_name\": \"/user.slice/session-4.scope\"" cg2.labels &&
	! grep -q container cg2.labels &&
	sql cg.db "DELETE FROM pushes; UPDATE processes SET cgroup = NULL" &&
	"$RSPROF" push $PUSH --window ..1s cg.db http://127.0.0.1:$RPORT &&
	pcheck r.cg labels | tail -1 >cg3.labels &&
	! grep -q "cgroup\|container" cg3.labels
'
stop_receiver

if command -v openssl >/dev/null; then
	# a CA of the test's own and a certificate for 127.0.0.1 signed by it
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
		-subj /CN=rsprof-test-ca 2>/dev/null &&
	openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr \
		-subj /CN=127.0.0.1 2>/dev/null &&
	printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext &&
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
		-extfile srv.ext -out srv.pem 2>/dev/null
	start_receiver r.tls --tls srv.pem srv.key
	test_expect_success 'HTTPS: a certificate the system does not know is refused, kept, sent with --push-ca' '
		expect_exit 1 "$RSPROF" push --push-spool tspool --push-interval 1s \
			--window ..1s cpu.db https://127.0.0.1:$RPORT 2>tls.err &&
		cat tls.err &&
		grep -q "cannot push to https://127.0.0.1:$RPORT/ingest" tls.err &&
		grep -q "hint: check the store.s certificate (--push-ca FILE" tls.err &&
		test "$(ls tspool | grep -c item)" = 1 &&
		test "$(pcheck r.tls count)" = 0 &&
		"$RSPROF" push -q --push-spool tspool --push-interval 1s --push-ca ca.pem cpu.db \
			https://127.0.0.1:$RPORT &&
		pcheck r.tls errors && pcheck r.tls dups &&
		test "$(pcheck r.tls total samples/count)" = "$(total_of cpu.db cpu.total_samples)"
	'
	stop_receiver
else
	test_skip 'HTTPS with --push-ca' 'openssl missing (scripts/packages.txt, test group)'
fi

start_receiver r.v1
test_expect_success 'a profile of seed 000 (version 1) pushes too' '
	make_v1 v1.db &&
	"$RSPROF" push $PUSH --push-format parca v1.db http://127.0.0.1:$RPORT &&
	pcheck r.v1 errors &&
	test "$(pcheck r.v1 total samples/count)" = 21
'
stop_receiver

test_expect_success 'bad arguments: exit 2, with what is wrong' '
	expect_exit 2 "$RSPROF" push cpu.db 2>e1 &&
	grep -q "URL are needed" e1 &&
	expect_exit 2 "$RSPROF" push cpu.db ftp://127.0.0.1/ 2>e2 &&
	grep -q "only http and https" e2 &&
	expect_exit 2 "$RSPROF" push --push-format zipkin cpu.db http://127.0.0.1:1 2>e3 &&
	grep -q "unknown push format" e3 &&
	expect_exit 2 "$RSPROF" push --label "bad label=x" cpu.db http://127.0.0.1:1 2>e4 &&
	grep -q "NAME=VALUE" e4 &&
	expect_exit 2 "$RSPROF" push --label __name__=x cpu.db http://127.0.0.1:1 &&
	expect_exit 2 "$RSPROF" push --push-user a:b --push-token t cpu.db http://127.0.0.1:1 &&
	expect_exit 2 "$RSPROF" push --push-spool-size lots cpu.db http://127.0.0.1:1 &&
	expect_exit 2 "$RSPROF" push --push-format otlp cpu.db http://127.0.0.1:1/ingest &&
	expect_exit 2 "$RSPROF" push --window 5s..1s cpu.db http://127.0.0.1:1 &&
	expect_exit 2 "$RSPROF" record --push-interval 1s -- true
'

test_expect_success 'another length of interval than before is refused' '
	expect_exit 2 "$RSPROF" push --push-interval 2s --push-spool spool cpu.db \
		http://127.0.0.1:$AGAIN 2>len.err &&
	grep -q "intervals of 1.0s" len.err
'

test_expect_success 'a profile being recorded is refused (it pushes itself)' '
	"$RSPROF" record -q -o live.db -- "$TARGETS/cpu_split" 30 &
	rec=$! &&
	bg_pid $rec &&
	wait_checkpoints live.db 1 &&
	expect_exit 1 "$RSPROF" push $PUSH live.db http://127.0.0.1:1 2>live.err &&
	grep -q "being recorded" live.err &&
	kill -INT $rec && wait $rec
'

test_done
