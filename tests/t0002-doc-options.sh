#!/bin/sh
# Manual pages and help agree: every long option of `rsprof CMD -h` is in
# Documentation/rsprof-CMD.txt and every option the page documents exists;
# every page has the sections a reader looks for.
. "$(dirname "$0")/lib.sh"

DOC=$TOP/Documentation

# The long options of a command's popt help, one per line.
help_opts() {
	"$RSPROF" "$1" -h | sed -n 's/^ *\(-[A-Za-z0-9], \)\{0,1\}\(--[A-Za-z][-A-Za-z0-9]*\).*/\2/p' |
		sort -u
}

# The long options a page documents as `--opt::`, `--opt=<x>::` entries.
doc_opts() {
	sed -n 's/^\(--[A-Za-z][-A-Za-z0-9]*\)[^:]*::$/\1/p' "$1" | sort -u
}

test_expect_success 'every command has a manual page' '
	for c in $("$RSPROF" --list-cmds); do
		test -f "$DOC/rsprof-$c.txt" || { echo "no Documentation/rsprof-$c.txt"; exit 1; }
	done
'

test_expect_success 'every option of CMD -h is documented in rsprof-CMD.txt' '
	fail=0
	for c in $("$RSPROF" --list-cmds); do
		page=$DOC/rsprof-$c.txt
		test -f "$page" || continue
		help_opts $c >help.$c || { echo "$c -h failed"; fail=1; continue; }
		test -s help.$c || { echo "$c -h lists no options"; fail=1; }
		doc_opts "$page" >doc.$c
		for o in $(comm -23 help.$c doc.$c); do
			echo "rsprof $c: $o is in -h but not in $page"
			fail=1
		done
	done
	exit $fail
'

test_expect_success 'every option documented in rsprof-CMD.txt exists in CMD -h' '
	fail=0
	for c in $("$RSPROF" --list-cmds); do
		page=$DOC/rsprof-$c.txt
		test -f "$page" || continue
		help_opts $c >help.$c
		doc_opts "$page" >doc.$c
		for o in $(comm -13 help.$c doc.$c); do
			echo "rsprof $c: $o is documented in $page but not in -h"
			fail=1
		done
	done
	exit $fail
'

test_expect_success 'every page has its title and the usual sections' '
	fail=0
	for page in "$DOC"/rsprof*.txt; do
		name=$(basename "$page" .txt)
		case $name in
		rsprof-files) sect=5; need="NAME SYNOPSIS DESCRIPTION EXAMPLES FILES SEE_ALSO" ;;
		*) sect=1; need="NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES EXIT_STATUS SEE_ALSO" ;;
		esac
		test "$(sed -n 1p "$page")" = "$name($sect)" ||
			{ echo "$name: first line is not $name($sect)"; fail=1; }
		sed -n 2p "$page" | grep -q "^=\{1,\}$" ||
			{ echo "$name: no = underline under the title"; fail=1; }
		for s in $need; do
			s=$(echo "$s" | tr _ " ")
			grep -qx "$s" "$page" ||
				{ echo "$name: no $s section"; fail=1; }
		done
		grep -q "^\[verse\]" "$page" || { echo "$name: SYNOPSIS not in [verse]"; fail=1; }
	done
	exit $fail
'

test_expect_success 'command pages have a FILES section' '
	fail=0
	for c in $("$RSPROF" --list-cmds); do
		page=$DOC/rsprof-$c.txt
		test -f "$page" || continue
		grep -qx "FILES" "$page" || { echo "rsprof-$c: no FILES section"; fail=1; }
	done
	exit $fail
'

test_expect_success 'the overview page lists every command' '
	for c in $("$RSPROF" --list-cmds); do
		grep -q "rsprof-$c(1)" "$DOC/rsprof.txt" || { echo "rsprof.txt lacks $c"; exit 1; }
	done
'

test_expect_success 'the man pages are built (section 5 for the file format)' '
	man=$(dirname "$RSPROF")/man
	for page in "$DOC"/rsprof*.txt; do
		name=$(basename "$page" .txt)
		sect=1
		test "$name" = rsprof-files && sect=5
		test -s "$man/$name.$sect" || { echo "missing $man/$name.$sect"; exit 1; }
	done
'

test_expect_success 'rsprof help files shows the file format page' '
	"$RSPROF" help files </dev/null >out &&
	grep -q "rsprof-files" out &&
	grep -q "heap_events" out
'

if command -v bash >/dev/null 2>&1; then
	test_expect_success 'bash completion: commands, options and .db files' '
		touch a.db b.txt &&
		mkdir -p bin && ln -sf "$RSPROF" bin/rsprof &&
		cat >comp.sh <<-\EOF_COMP &&
		. "$TOP/contrib/completion/rsprof.bash"
		complete_words() {
			COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
			COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			COMPREPLY=()
			_rsprof rsprof "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
			printf "%s\n" "${COMPREPLY[@]}"
		}
		echo "== cmds"; complete_words "$RSPROF" ti
		echo "== opts"; complete_words "$RSPROF" timeline --s
		echo "== files"; complete_words "$RSPROF" report ""
		echo "== rank"; complete_words "$RSPROF" timeline --rank ""
		EOF_COMP
		TOP=$TOP bash comp.sh >comp.out 2>comp.err &&
		cat comp.out &&
		sed -n "/== cmds/,/== opts/p" comp.out | grep -qx timeline &&
		sed -n "/== opts/,/== files/p" comp.out | grep -qx -- --svg &&
		sed -n "/== files/,/== rank/p" comp.out | grep -qx a.db &&
		! sed -n "/== files/,/== rank/p" comp.out | grep -qx b.txt &&
		sed -n "/== rank/,\$p" comp.out | grep -qx growth
	'
else
	test_skip 'bash completion' 'bash is not installed'
fi

test_expect_success 'make install honours PREFIX and DESTDIR' '
	make -s -C "$TOP" OUT="$(dirname "$RSPROF")" install DESTDIR="$TEST_DIR/root" \
		PREFIX=/opt/rs >install.out 2>&1 || { cat install.out; exit 1; }
	test -x root/opt/rs/bin/rsprof &&
	test -s root/opt/rs/share/man/man1/rsprof-timeline.1 &&
	test -s root/opt/rs/share/man/man5/rsprof-files.5 &&
	! test -e root/opt/rs/share/man/man1/rsprof-files.1 &&
	test -s root/opt/rs/share/bash-completion/completions/rsprof
'

if command -v man >/dev/null 2>&1; then
	test_expect_success 'help CMD | cat: formatted text, found under any install prefix' '
		root/opt/rs/bin/rsprof help record </dev/null | cat >inst.out &&
		head -3 inst.out &&
		grep -q "^RSPROF-RECORD(1)" inst.out &&
		grep -q "^SYNOPSIS" inst.out &&
		! grep -q "^\\[verse\\]\\|^====\\|^----" inst.out &&
		"$RSPROF" help report | cat >built.out &&
		grep -q "^RSPROF-REPORT(1)" built.out
	'
else
	test_skip 'help CMD | cat: formatted by man' 'man is not installed (man-db)'
fi

test_expect_success 'help without man: the embedded text, without asciidoc markup' '
	PATH=/nonexistent "$RSPROF" help record >plain.out &&
	grep -q "rsprof-record - record" plain.out &&
	grep -q "rsprof record \\[<options>\\] -- <command>" plain.out &&
	! grep -q "^\\[verse\\]\\|^====\\|^----" plain.out
'

test_expect_success 'SYNOPSIS: -- stays two hyphens (no em dash) in the man pages' '
	man=$(dirname "$RSPROF")/man &&
	! grep -l "\\\\(em" "$man"/*.1 "$man"/*.5 &&
	grep -q "\\\\-\\\\- <command>" "$man/rsprof-record.1" &&
	grep -q "\\\\-\\\\- <command>" "$man/rsprof-top.1"
'

test_expect_success 'completion offers only values the commands accept' '
	"$(dirname "$RSPROF")/tests/helper/fixture" fx.db &&
	vals() {	# the values completion offers after option $1
		sed -n "/^	$1)/,/return ;;/p" "$TOP/contrib/completion/rsprof.bash" |
			sed -n "s/.*compgen -W .\\([^\x27]*\\). .*/\\1/p"
	}
	test -n "$(vals --format)" &&
	for v in $(vals --format); do
		"$RSPROF" report --format $v fx.db >/dev/null 2>err || { echo "--format $v"; cat err; exit 1; }
	done &&
	for v in $(vals --by); do
		"$RSPROF" diff --by $v fx.db fx.db >/dev/null || { echo "--by $v"; exit 1; }
	done &&
	for v in $(vals "-s | --sort"); do
		"$RSPROF" report -s $v fx.db >/dev/null || { echo "-s $v"; exit 1; }
	done &&
	for v in $(vals --rank); do
		"$RSPROF" timeline --rank $v fx.db >/dev/null || { echo "--rank $v"; exit 1; }
	done
'

test_done
