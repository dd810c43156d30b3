# bash completion for rsprof                                -*- shell-script -*-
#
# Commands come from `rsprof --list-cmds`, options from `rsprof CMD -h` (so
# this file never lists an option that the binary does not have), and
# profile arguments complete to *.db files. Installed by `make install` as
# $(PREFIX)/share/bash-completion/completions/rsprof.

# The long and short options of one command, cached per command.
_rsprof_opts()
{
	local cmd=$1 var=_rsprof_opts_cache_$1
	if [[ -z ${!var-} ]]; then
		printf -v "$var" '%s' "$("$_rsprof_bin" "$cmd" -h 2>/dev/null |
			grep -oE -- '(^|[ ,])--?[A-Za-z][-A-Za-z0-9]*' |
			sed 's/^[ ,]*//' | sort -u | tr '\n' ' ')"
	fi
	printf '%s' "${!var}"
}

_rsprof()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion -n = || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	_rsprof_bin=${words[0]}

	# the command: first word after rsprof that is not a global option
	local i cmd=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--version --help' -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$_rsprof_bin" --list-cmds 2>/dev/null)" -- "$cur"))
		fi
		return
	fi

	# after `--` (record/top -- CMD ARGS): complete commands, then files
	for ((i = i + 1; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			if ((i == cword - 1)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return
		fi
	done

	# values of options
	case $prev in
	-o | --output | --svg)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--source-dir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	--sort-by)
		COMPREPLY=($(compgen -W 'live peak allocated allocs temporary' -- "$cur"))
		return ;;
	-p | --pid)
		COMPREPLY=($(compgen -W "$(cd /proc 2>/dev/null && echo [0-9]*)" -- "$cur"))
		return ;;
	-P | --process | --comm)
		COMPREPLY=($(compgen -W "$(cat /proc/[0-9]*/comm 2>/dev/null | sort -u)" -- "$cur"))
		return ;;
	--by)
		COMPREPLY=($(compgen -W 'line function file' -- "$cur"))
		return ;;
	-s | --sort)
		if [[ $cmd == top ]]; then
			COMPREPLY=($(compgen -W 'line process' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'line function file module process symbol' -- "$cur"))
		fi
		return ;;
	--rank)
		COMPREPLY=($(compgen -W 'final peak growth' -- "$cur"))
		return ;;
	--color)
		COMPREPLY=($(compgen -W 'auto always never' -- "$cur"))
		return ;;
	--heap-backend)
		COMPREPLY=($(compgen -W 'auto inject preload uprobe' -- "$cur"))
		return ;;
	--call-graph)
		# record and top take a mode (report's --call-graph is a switch)
		if [[ $cmd == record || $cmd == top ]]; then
			COMPREPLY=($(compgen -W 'dwarf fp' -- "$cur"))
			return
		fi ;;
	--heap-probes)
		COMPREPLY=($(compgen -W 'auto rust libc' -- "$cur"))
		return ;;
	--heap-attribution)
		COMPREPLY=($(compgen -W 'first-user caller stack' -- "$cur"))
		return ;;
	--format)
		COMPREPLY=($(compgen -W 'text pprof folded' -- "$cur"))
		return ;;
	--push-format)
		COMPREPLY=($(compgen -W 'pyroscope pyroscope-connect parca otlp' -- "$cur"))
		return ;;
	--push-ca)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--push-spool | --cgroup)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	-F | --freq | -i | --interval | -d | --duration | -n | --top | -t | --threshold | \
	--since | --until | --window | --at | --filter | --heap-sample | --heap-sample-bytes | \
	--path-map | --context | --callers | --callees | --addr | --after | --max-rows | \
	--alloc-fn | --push | --push-interval | --label | --push-user | --push-token | \
	--push-tenant | --push-spool-size | --push-timeout)
		return ;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_rsprof_opts "$cmd")" -- "$cur"))
		return
	fi

	case $cmd in
	help)
		COMPREPLY=($(compgen -W "$("$_rsprof_bin" --list-cmds 2>/dev/null) rsprof files" \
			-- "$cur"))
		;;
	record)
		;;
	annotate)
		# a profile, then a function or a source file
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	top)
		COMPREPLY=($(compgen -W 'cpu heap' -- "$cur"))
		COMPREPLY+=($(compgen -f -X '!*.db' -- "$cur") $(compgen -d -- "$cur"))
		;;
	*)
		# profiles: *.db files, and directories to walk into
		COMPREPLY=($(compgen -f -X '!*.db' -- "$cur") $(compgen -d -- "$cur"))
		;;
	esac
}

complete -o filenames -F _rsprof rsprof
