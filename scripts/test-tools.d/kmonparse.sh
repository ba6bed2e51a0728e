# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
# scripts/test-tools.d/kmonparse.sh - kmonparse's command line, exit
# statuses, write errors, signals, and its output byte for byte against
# a reference decoder (kmonref.py, below: the printf() formats of the
# kmonparse that called printf() per field) on logs of every record kind
# that tests/kmongen -m writes. Sourced by scripts/test-tools ($out,
# $src, $KTREE, $KOBJ, t_pass, t_fail, failed). KMT_KMONPARSE=PATH tests
# another kmonparse binary (the one before a change, to see a test fail).

KP=${KMT_KMONPARSE:-$out/kmonparse}
kd=$out/kmonparse-t
rm -rf "$kd"
mkdir -p "$kd"

gcc -Wall -Wextra -Werror -O2 -I"$KTREE/tools/include" -isystem "$KOBJ/usr/include" \
	-o "$kd/kmongen" "$src/tests/kmongen.c"
# Every record kind (tests/kmongen.c -m), on 300 CPUs, with pids.dat;
# PID 7, which kmongen's pids.dat leaves out, gets a 300000-byte name,
# longer than kmonparse's output buffer.
"$kd/kmongen" -m -n 40000 -p "$kd/mix.pids" "$kd/mix.log"
printf '7\t%s;-x\n' "$(head -c 300000 /dev/zero | tr '\0' x)" >>"$kd/mix.pids"
# A 2-CPU log of the four kinds kmongen writes by default.
"$kd/kmongen" -n 20000 "$kd/rounds.log"

cat >"$kd/kmonref.py" <<'EOF'
# kmonref.py [-f text|perfetto] [-s SCALE] [-p PIDFIL] LOG: what kmonparse
# prints for a log without errors, decoded and formatted as the printf()
# calls of kmonparse 1.0 did (%#llx, %.3f, ...), in Python.
import struct, sys

args = sys.argv[1:]
fmt, scale, pidfile = 'text', 1000, None
while len(args) > 1:
    o, v = args[0], args[1]
    args = args[2:]
    if o == '-f':
        fmt = v
    elif o == '-s':
        scale = int(v)
    elif o == '-p':
        pidfile = v
log = open(args[0], 'rb').read()


def utf8_len(b, i):
    c = b[i]
    if c < 0x80:
        return 1
    if 0xc2 <= c <= 0xdf:
        n = 2
    elif 0xe0 <= c <= 0xef:
        n = 3
    elif 0xf0 <= c <= 0xf4:
        n = 4
    else:
        return 0
    lo, hi = 0x80, 0xbf
    if c == 0xe0:
        lo = 0xa0
    elif c == 0xed:
        hi = 0x9f
    elif c == 0xf0:
        lo = 0x90
    elif c == 0xf4:
        hi = 0x8f
    for k in range(1, n):
        if i + k >= len(b) or not lo <= b[i + k] <= hi:
            return 0
        lo, hi = 0x80, 0xbf
    return n


names = {}
if pidfile:
    for line in open(pidfile, 'rb').read().split(b'\n'):
        line = line.split(b'\r')[0]
        if not line:
            continue
        pid, cmd = line.split(b'\t', 1)
        src = cmd.split(b';')[0]
        b = bytearray(src)
        i = 0
        while i < len(b):
            n = utf8_len(src, i)    # as C's, which looks ahead of what it changed
            if b[i] in b',="\\':
                b[i] = ord('_')
            elif b[i] < 0x20 or b[i] == 0x7f or not n:
                b[i] = ord('?')
            i += n or 1
        names[int(pid)] = bytes(b)

out = []
w = out.append


def hx(v):
    return b'%#x' % v if v else b'0'    # C's %#x: no 0x for 0


def usec(ns):
    return b'%.3f' % (ns / 1000.0)


def label(pid):
    if not pid:
        return b'[IDLE] (0)'
    n = names.get(pid)
    ps = b'%d' % pid
    if n is None:
        return ps
    room = 128 - len(ps) - 4
    nl = len(n)
    if nl > room:
        nl = room
        while nl and n[nl] & 0xc0 == 0x80:
            nl -= 1
    return n[:nl] + b' (' + ps + b')'


def tname(field, pid):
    if not pidfile:
        return b''
    n = b'[IDLE]' if not pid else names.get(pid, b'?')
    return b',' + field + b'=' + n


first = [True]


def jnext():
    w(b'' if first[0] else b',')
    w(b'\n    ')
    first[0] = False


tracks = {}


def track(cpu):
    if cpu not in tracks:
        tracks[cpu] = [False, 0, 0]
        jnext()
        w(b'{ "ph": "M", "pid": 1, "tid": %d, "name": "thread_name", "args": { "name": "CPU %d" } }' % (cpu, cpu))
    return tracks[cpu]


def slice_ns(since, to):
    # As a reader adds them, as doubles, ts + dur must end before the
    # next slice's ts: a nanosecond less until it does.
    d = to - since if to > since else 0
    while d and since / 1e3 + d / 1e3 >= to / 1e3:
        d -= 1
    return d


def close(cpu, t, ts):
    if not t[0]:
        return
    jnext()
    w(b'{ "ph": "X", "pid": 1, "tid": %d, "ts": %s, "dur": %s, "name": "%s", "args": { "pid": %d } }'
      % (cpu, usec(t[2]), usec(slice_ns(t[2], ts)), label(t[1]), t[1]))
    t[0] = False


if fmt == 'perfetto':
    w(b'{\n  "displayTimeUnit": "ns",\n  "traceEvents": [')
off, t0, last = 0, None, 0
while off < len(log):
    cpu, ts, bl = struct.unpack_from('<BQH', log, off)
    hl = 11
    if cpu == 255:
        cpu = struct.unpack_from('<I', log, off + 11)[0]
        hl = 15
    b = log[off + hl:off + hl + bl]
    off += hl + bl
    if t0 is None:
        t0 = ts
    last = max(last, ts)
    d = min(abs(ts - t0) // scale, 2**63 - 1)
    head = b'cpu=%d,ts=%d,op=' % (cpu, d if ts >= t0 else -d)
    k = b[0]
    if k == 127:
        if fmt == 'text':
            ctx = [b'task', b'softirq', b'hardirq', b'nmi'][b[1]] if b[1] < 4 else b'?'
            w(head + b'TST,ctx=%s,seq=%d\n' % (ctx, struct.unpack_from('<I', b, 2)[0]))
    elif k in (9, 10):
        alloc = k == 9
        who = [b'kmalloc', b'kmem_cache', b'pages'][b[1]]
        pid, site, ptr = struct.unpack_from('<IQQ', b, 3)
        if fmt == 'text':
            c = b[2]
            s = head + (b'ALC' if alloc else b'FRE') + b',alloc=' + who + b',ctx='
            s += b'hardirq' if c & 1 else b'softirq' if c & 2 else b'task'
            s += b',bulk' if c & 4 else b''
            s += b',pid=%d' % pid + (tname(b'name', pid) if pid else b'')
            s += b',site=%s,ptr=%s' % (hx(site), hx(ptr))
            if alloc:
                req, size, gfp, node, cache = struct.unpack_from('<QQIhQ', b, 23)
                s += b',req=%d,size=%d,gfp=%s,node=%d' % (req, size, hx(gfp), node)
            else:
                cache = struct.unpack_from('<Q', b, 23)[0]
            if b[1] != 2:
                s += b',cache=%d' % cache
            w(s + b'\n')
        else:
            track(cpu)
            jnext()
            w(b'{ "ph": "i", "s": "t", "pid": 1, "tid": %d, "ts": %s, ' % (cpu, usec(ts)))
            if alloc:
                w(b'"name": "%s %d", ' % (who, struct.unpack_from('<Q', b, 31)[0]))
            else:
                w(b'"name": "%s free", ' % who)
            w(b'"args": { "task": "%s", "site": "%s", "ptr": "%s" } }'
              % (label(pid) if pid else b'(interrupt)', hx(site), hx(ptr)))
    elif 1 <= k <= 8:
        kind = (k - 1) % 4 + 1
        pw = 4 if k >= 5 else 2
        f = '<I' if pw == 4 else '<H'
        a = struct.unpack_from(f, b, 1)[0]
        z = struct.unpack_from(f, b, 1 + pw)[0] if kind >= 3 else 0
        if fmt == 'text':
            s = head + [b'', b'QUE', b'DEQ', b'SWC', b'WAK'][kind]
            if kind <= 2:
                s += b',pid=%d' % a + tname(b'name', a)
            elif kind == 3:
                s += b',prev=%d,next=%d' % (a, z) + tname(b'prev_name', a) + tname(b'next_name', z)
            else:
                s += b',from=%d,to=%d' % (a, z)
                s += b',from_name=[IRQ]' if pidfile and not a else tname(b'from_name', a)
                s += tname(b'to_name', z)
            w(s + b'\n')
        elif kind == 3:
            t = track(cpu)
            close(cpu, t, ts)
            t[0], t[1], t[2] = True, z, ts
        else:
            track(cpu)
            jnext()
            w(b'{ "ph": "i", "s": "t", "pid": 1, "tid": %d, "ts": %s, ' % (cpu, usec(ts)))
            if kind == 4:
                w(b'"name": "wakeup %s", "args": { "pid": %d, "from": %d } }' % (label(z), z, a))
            else:
                w(b'"name": "%s %s", "args": { "pid": %d } }'
                  % (b'enqueue' if kind == 1 else b'dequeue', label(a), a))
if fmt == 'perfetto':
    for cpu in sorted(tracks):
        close(cpu, tracks[cpu], last)
    jnext()
    w(b'{ "ph": "M", "pid": 1, "name": "process_name", "args": { "name": "kmon: CPUs" } }')
    w(b'\n  ]\n}\n')
sys.stdout.buffer.write(b''.join(out))
EOF

# Perfetto's microseconds (%.3f of ns / 1000.0) where the double is no
# longer within 0.0005 of the quotient: switches on CPU 0 at time stamps
# around 8e15 (where kmonparse stops taking the digits of the integer),
# 2^53 and 2^64, slices between them, and instants at the same stamps.
python3 - "$kd/usec.log" <<'EOF'
import struct, sys
ts = [1, 999, 1000, 1001, 8796093022207999, 7999999999999999, 8000000000000000,
      8000000000000001, 8000000000000500, 8000000000001500, 2**53 - 1, 2**53, 2**53 + 1,
      2**53 + 3, 10**18 + 2500, 10**18 + 3500, 2**63, 2**64 - 1001, 2**64 - 1000, 2**64 - 1]
f = open(sys.argv[1], 'wb')
for i, t in enumerate(ts):
    f.write(struct.pack('<BQHBHH', 0, t, 5, 3, 100 + i, 101 + i))
    f.write(struct.pack('<BQHBHH', 1, t, 5, 4, 0, 100 + i))
EOF

# kp_same NAME LOG ARGS...: kmonparse ARGS LOG writes what kmonref.py does,
# and nothing on standard error but the count of unknown blobs; exit 0.
kp_same() {
	local name=$1 log=$2 rc=0
	shift 2
	python3 "$kd/kmonref.py" "$@" "$log" >"$kd/$name.want"
	"$KP" "$@" "$log" >"$kd/$name.out" 2>"$kd/$name.err" || rc=$?
	if [ $rc -ne 0 ] || grep -qv 'records of unknown blob types skipped$' "$kd/$name.err" ||
	   ! cmp -s "$kd/$name.want" "$kd/$name.out"; then
		bad+=" [$name: exit $rc, $(cmp "$kd/$name.want" "$kd/$name.out" 2>&1 | head -c 150)]"
	fi
}
bad=""
kp_same mix-text "$kd/mix.log"
kp_same mix-text-names "$kd/mix.log" -p "$kd/mix.pids"
kp_same mix-text-ns "$kd/mix.log" -s 1 -p "$kd/mix.pids"
kp_same mix-text-s3 "$kd/mix.log" -s 3
kp_same mix-text-s1e9 "$kd/mix.log" -s 1000000000
kp_same mix-json "$kd/mix.log" -f perfetto
kp_same mix-json-names "$kd/mix.log" -f perfetto -p "$kd/mix.pids"
kp_same rounds-text "$kd/rounds.log"
kp_same rounds-json "$kd/rounds.log" -f perfetto
kp_same usec-json "$kd/usec.log" -f perfetto
kp_same usec-text "$kd/usec.log" -s 1
# The same from a pipe, whose reads end anywhere in a record.
rc=0
"$KP" -f perfetto -p "$kd/mix.pids" <"$kd/mix.log" >"$kd/pipe-json.out" 2>/dev/null || rc=$?
cmp -s "$kd/mix-json-names.want" "$kd/pipe-json.out" || bad+=" [from a pipe: exit $rc, output differs]"
if [ -z "$bad" ] &&
   awk 'match($0, /,name=x+,/) && RLENGTH == 300007 { f = 1 } END { exit !f }' "$kd/mix-text-names.out"; then
	t_pass "kmonparse: every record kind (kmongen -m: 40000 records on 300 CPUs, pids.dat with a 300000-byte name) and Perfetto's microseconds up to 2^64 ns, in text (4 scales) and JSON, from a file and a pipe: byte for byte what printf() wrote"
else
	t_fail "kmonparse: output against the reference decoder" "$bad"
	failed=1
fi

# The command line: --version, --help, bad usage.
bad=""
ver=$(sed -n 's/^#define KMT_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$src/kmt_cli.h")
rc=0
"$KP" --version >"$kd/version" 2>&1 || rc=$?
printf 'kmonparse (kmemtrace tools) %s\nkmon format 2\n' "$ver" >"$kd/version.want"
[ $rc -eq 0 ] && cmp -s "$kd/version.want" "$kd/version" ||
	bad+=" [--version: exit $rc: $(tr '\n' ' ' <"$kd/version")]"
for h in --help -h; do
	rc=0
	"$KP" $h >"$kd/help" 2>"$kd/help.err" || rc=$?
	[ $rc -eq 0 ] && [ ! -s "$kd/help.err" ] && grep -q '^Usage: kmonparse' "$kd/help" &&
		grep -q '^Exit status: 0 done, 1 the data has a problem (unused: kmonlog counts losses),$' "$kd/help" &&
		grep -q '^2 bad usage or an I/O error, 3 corrupt input.$' "$kd/help" ||
		bad+=" [$h: exit $rc]"
done
# kp_status NAME STATUS REGEX ARGS...: kmonparse exits STATUS and says
# something matching REGEX on standard error.
kp_status() {
	local name=$1 want=$2 re=$3 rc=0
	shift 3
	"$KP" "$@" >"$kd/$name.out" 2>"$kd/$name.err" || rc=$?
	[ $rc -eq "$want" ] && grep -Eq -- "$re" "$kd/$name.err" ||
		bad+=" [$name: exit $rc (want $want): $(head -c 200 "$kd/$name.err" | tr '\n' ' ')]"
}
kp_status bogus 2 '^Usage: kmonparse' --bogus "$kd/rounds.log"
kp_status twologs 2 'one log at most' "$kd/rounds.log" "$kd/rounds.log"
kp_status s-blank 2 "--scale: ' 5' is not a number" -s ' 5' "$kd/rounds.log"
kp_status s-plus 2 "--scale: '\+5' is not a number" -s +5 "$kd/rounds.log"
kp_status nolog 2 'nosuch.log: No such file' "$kd/nosuch.log"
kp_status nopids 2 'nosuch.dat: No such file' -p "$kd/nosuch.dat" "$kd/rounds.log"
printf '1\tinit\nnot a line\n' >"$kd/bad.pids"
kp_status badpids 3 'bad.pids: line 2: not "PID<tab>COMMAND"' -p "$kd/bad.pids" "$kd/rounds.log"
# Cut in the middle of the 20th record: the 19 before it are written.
head -c $((138 * 5 - 20)) "$kd/rounds.log" >"$kd/cut.log"
kp_status cut 3 'cut.log: byte 648: truncated record \(blob of 31 bytes\)$' "$kd/cut.log"
head -n 19 "$kd/rounds-text.want" >"$kd/cut.want"
cmp -s "$kd/cut.want" "$kd/cut.out" || bad+=" [cut: not the 19 records before the cut]"
kp_status cut-json 3 'byte 648: truncated record' -f perfetto "$kd/cut.log"
if [ -z "$bad" ]; then
	t_pass "kmonparse: --version (kmt_print_version, kmon format 2) and --help exit 0 (the common exit-status lines); bad usage, a missing log or pids.dat exit 2; a bad pids.dat line and a truncated log exit 3, after the records before it"
else
	t_fail "kmonparse: command line and exit statuses" "$bad"
	failed=1
fi

# Write errors: a full disk, a closed pipe, the log as its own output.
bad=""
for f in text perfetto; do
	rc=0
	"$KP" -f $f "$kd/rounds.log" >/dev/full 2>"$kd/full-$f.err" || rc=$?
	[ $rc -eq 2 ] && grep -qx 'kmonparse: <stdout>: No space left on device' "$kd/full-$f.err" ||
		bad+=" [-f $f >/dev/full: exit $rc: $(head -c 200 "$kd/full-$f.err")]"
done
for o in --help --version; do
	rc=0
	"$KP" $o >/dev/full 2>"$kd/full$o.err" || rc=$?
	[ $rc -eq 2 ] && grep -q 'No space left on device' "$kd/full$o.err" ||
		bad+=" [$o >/dev/full: exit $rc]"
done
{
	rc=0
	"$KP" "$kd/mix.log" 2>"$kd/epipe.err" || rc=$?
	echo $rc >"$kd/epipe.rc"
} | head -c 100 >/dev/null
[ "$(cat "$kd/epipe.rc")" = 2 ] && grep -qx 'kmonparse: <stdout>: Broken pipe' "$kd/epipe.err" ||
	bad+=" [| head -c 100: exit $(cat "$kd/epipe.rc"): $(head -c 200 "$kd/epipe.err")]"
cp "$kd/rounds.log" "$kd/self.log"
rc=0
# shellcheck disable=SC2094 # the point: the log as its own output
"$KP" "$kd/self.log" >>"$kd/self.log" 2>"$kd/self.err" || rc=$?
[ $rc -eq 2 ] && grep -q 'self.log: standard output is the log itself' "$kd/self.err" &&
	cmp -s "$kd/rounds.log" "$kd/self.log" || bad+=" [LOG >>LOG: exit $rc, $(stat -c %s "$kd/self.log") bytes]"
if [ -z "$bad" ]; then
	t_pass "kmonparse: output to /dev/full (text, JSON, --help, --version) and to a closed pipe: exit 2 naming the error; a log appended to itself is refused, exit 2, the log unchanged"
else
	t_fail "kmonparse: write errors" "$bad"
	failed=1
fi

# Signals. kp_alive PID: PID runs (a zombie does not).
kp_alive() {
	local s
	s=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$s" ] && [ "$s" != Z ]
}
# kp_end PID: PID's exit status in kp_rc, waiting up to 10 s; 255 after
# killing it if it had not ended. (Not in a subshell: wait needs PID's
# parent.)
kp_end() {
	local i
	for ((i = 0; i < 100; i++)); do
		kp_alive "$1" || break
		sleep 0.1
	done
	kp_rc=0
	if kp_alive "$1"; then
		kill -KILL "$1"
		wait "$1" || :
		kp_rc=255
		return
	fi
	wait "$1" || kp_rc=$?
}
# kp_size FILE BYTES: waits up to 10 s for FILE to hold BYTES.
kp_size() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(stat -c %s "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
bad=""
# A first SIGTERM, then a first SIGINT, while kmonparse waits for more
# of a log from a FIFO whose writer stays open: it writes what it
# decoded, says where it stopped, exits 0. (It writes its output before
# it waits: the test waits for all of it before the signal.)
head -c $((138 * 200)) "$kd/rounds.log" >"$kd/sig.log"
python3 "$kd/kmonref.py" "$kd/sig.log" >"$kd/sig-text.want"
# Without a switch, Perfetto's output before the end is the whole
# output but its last element (the process name) and the closing.
python3 - "$kd/sig.log" "$kd/nosw.log" <<'EOF'
import struct, sys
d, o, out = open(sys.argv[1], 'rb').read(), 0, b''
while o < len(d):
    n = 11 + struct.unpack_from('<H', d, o + 9)[0]
    if d[o + 11] != 3:
        out += d[o:o + n]
    o += n
open(sys.argv[2], 'wb').write(out)
EOF
python3 "$kd/kmonref.py" -f perfetto "$kd/nosw.log" >"$kd/sig-json.want"
tail='{ "ph": "M", "pid": 1, "name": "process_name", "args": { "name": "kmon: CPUs" } }'
for s in TERM INT; do
	if [ $s = TERM ]; then
		f=text log=$kd/sig.log want=$kd/sig-text.want n=800
		upto=$(stat -c %s "$want")
	else
		f=perfetto log=$kd/nosw.log want=$kd/sig-json.want n=600
		upto=$(($(stat -c %s "$want") - ${#tail} - 13))	# ",\n    " TAIL "\n  ]\n}\n"
	fi
	rm -f "$kd/fifo"
	mkfifo "$kd/fifo"
	"$KP" -f $f "$kd/fifo" >"$kd/sig$s.out" 2>"$kd/sig$s.err" &
	pid=$!
	exec 7>"$kd/fifo"
	cat "$log" >&7
	kp_size "$kd/sig$s.out" "$upto" || :
	kill -$s $pid
	kp_end $pid
	exec 7>&-
	[ "$kp_rc" -eq 0 ] && cmp -s "$want" "$kd/sig$s.out" &&
		grep -qx "kmonparse: stopped by a signal at byte $(stat -c %s "$log") of $kd/fifo, after $n records" "$kd/sig$s.err" ||
		bad+=" [SIG$s, -f $f: exit $kp_rc, $(cmp "$want" "$kd/sig$s.out" 2>&1 | head -c 100) $(head -c 200 "$kd/sig$s.err")]"
done
# A second SIGTERM ends it at once, killed by the signal, while it waits
# to write to a reader that does not read: the first leaves it writing.
rm -f "$kd/ofifo"
mkfifo "$kd/ofifo"
# shellcheck disable=SC2217 # a reader that never reads
sleep 60 <"$kd/ofifo" &
reader=$!
"$KP" "$kd/mix.log" >"$kd/ofifo" 2>/dev/null &
pid=$!
for ((i = 0; i < 100; i++)); do
	# kmonparse itself asleep in its write, not the shell that forked it
	# asleep opening the FIFO, which the signal would kill.
	[ "$(readlink "/proc/$pid/exe")" = "$(readlink -f "$KP")" ] &&
		[ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" = S ] && break
	sleep 0.1
done
kill -TERM $pid
sleep 0.5
alive=no
kp_alive $pid && alive=yes
kill -TERM $pid 2>/dev/null || :
kp_end $pid
kill $reader 2>/dev/null || :
wait $reader 2>/dev/null || :
[ $alive = yes ] && [ "$kp_rc" -eq $((128 + 15)) ] ||
	bad+=" [two SIGTERMs writing to a full pipe: alive after the first: $alive, exit $kp_rc]"
if [ -z "$bad" ]; then
	t_pass "kmonparse: a first SIGTERM or SIGINT stops the reading: what was decoded is written (the JSON closed), the stop said, exit 0; a second ends it at once"
else
	t_fail "kmonparse: signals" "$bad"
	failed=1
fi

# A viewer adds "ts" and "dur" as doubles: the slices of a CPU must not
# overlap once it has (speedscope nests a slice that starts before the
# one before it ends). The 2-CPU rounds, their time stamps stretched by
# 1.000003 so that they fall on odd nanoseconds, still in order.
python3 - "$kd/rounds.log" "$kd/rounds-ns.log" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
o = 0
while o < len(d):
    ts = int.from_bytes(d[o + 1:o + 9], "little") * 1000003 // 1000000
    d[o + 1:o + 9] = ts.to_bytes(8, "little")
    o += 11 + (4 if d[o] == 0xff else 0) + int.from_bytes(d[o + 9:o + 11], "little")
open(sys.argv[2], "wb").write(d)
PY
if "$KP" -f perfetto "$kd/rounds-ns.log" >"$kd/rounds.json" 2>"$kd/rounds-json.err" &&
	python3 - "$kd/rounds.json" >"$kd/rounds-json.py" 2>&1 <<'PY'; then
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
by = {}
for e in ev:
    by.setdefault(e["tid"], []).append(e)
bad = 0
for tid, s in by.items():
    s.sort(key=lambda e: e["ts"])
    bad += sum(1 for a, b in zip(s, s[1:]) if a["ts"] + a["dur"] >= b["ts"])
assert len(ev) > 1000, "only %d slices" % len(ev)
assert not bad, "%d slices end as or after the next one starts" % bad
print("%d slices" % len(ev))
PY
	t_pass "kmonparse: --format=perfetto: every slice ends, as doubles add, before the next one of its CPU starts ($(cat "$kd/rounds-json.py"))"
else
	t_fail "kmonparse: perfetto slices overlap" "$(tr '\n' ' ' <"$kd/rounds-json.py") $(head -c 200 "$kd/rounds-json.err")"
	failed=1
fi
