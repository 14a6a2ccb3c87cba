package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sort"
	"strings"
)

// completionNode is one command path as completion sees it: the words that
// may follow it (subcommands, or a leaf's flags).
type completionNode struct {
	path  []string // without "payhook"
	subs  []string
	flags []string // "--name" forms
}

// flagLine matches a flag in flag.PrintDefaults' output ("  -name value").
var flagLine = regexp.MustCompile(`(?m)^  -([A-Za-z0-9][-A-Za-z0-9_]*)`)

// completionTree lists every command path with the words that may follow
// it. A leaf's flags are read from its own --help, so completion cannot
// drift from the flags a command really takes.
func completionTree(ctx context.Context) ([]completionNode, error) {
	var nodes []completionNode
	quiet := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, logger: slog.New(slog.DiscardHandler)}
	var visit func(c *command, path []string) error
	visit = func(c *command, path []string) error {
		n := completionNode{path: path}
		if c.run != nil {
			err := c.run(ctx, quiet, []string{"--help"})
			var h *helpError
			if !errors.As(err, &h) {
				return fmt.Errorf("payhook %s --help: %v, want its usage", strings.Join(path, " "), err)
			}
			for _, m := range flagLine.FindAllStringSubmatch(h.usage, -1) {
				n.flags = append(n.flags, "--"+m[1])
			}
			n.flags = append(n.flags, "--help")
			sort.Strings(n.flags)
		}
		for _, s := range c.subs {
			n.subs = append(n.subs, s.name)
		}
		nodes = append(nodes, n)
		for _, s := range c.subs {
			if err := visit(s, append(append([]string(nil), path...), s.name)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(commands(), nil); err != nil {
		return nil, err
	}
	nodes[0].subs = append(nodes[0].subs, "help")
	return nodes, nil
}

// completionCmd prints the completion script for shell.
func completionCmd(shell string) func(context.Context, *env, []string) error {
	return func(ctx context.Context, e *env, args []string) error {
		fs := newFlagSet("payhook completion "+shell, e.stderr)
		if err := parse(fs, args); err != nil {
			return err
		}
		nodes, err := completionTree(ctx)
		if err != nil {
			return err
		}
		switch shell {
		case "bash":
			_, err = io.WriteString(e.stdout, bashCompletion(nodes))
		case "zsh":
			_, err = io.WriteString(e.stdout, zshCompletion(nodes))
		default:
			_, err = io.WriteString(e.stdout, fishCompletion(nodes))
		}
		return err
	}
}

const globalFlagWords = "--log-format --log-level"

// words is what may follow node n: its subcommands or flags, and the
// global flags.
func (n completionNode) words() string {
	return strings.Join(append(append(append([]string(nil), n.subs...), n.flags...), globalFlagWords), " ")
}

func (n completionNode) key() string { return "/" + strings.Join(n.path, "/") }

// shellCases writes, for bash and zsh (whose case patterns may open with
// "("), the loop that finds the command
// path among the words typed (skipping flags and their values: only known
// paths extend it) and the case that offers the words after it.
func shellCases(b *strings.Builder, nodes []completionNode, open string) {
	var paths []string
	for _, n := range nodes[1:] {
		paths = append(paths, n.key())
	}
	fmt.Fprintf(b, "    case \"$cmdpath/$w\" in\n      %s%s) cmdpath=\"$cmdpath/$w\" ;;\n    esac\n  done\n", open, strings.Join(paths, "|"))
	b.WriteString("  case \"$prev\" in\n")
	fmt.Fprintf(b, "    %s--log-format|-log-format) opts=\"text json\" ;;\n", open)
	fmt.Fprintf(b, "    %s--log-level|-log-level) opts=\"debug info warn error\" ;;\n", open)
	b.WriteString("    *)\n      case \"$cmdpath\" in\n")
	for _, n := range nodes {
		k := n.key()
		if len(n.path) == 0 {
			k = ""
		}
		fmt.Fprintf(b, "        %s%q) opts=%q ;;\n", open, k, n.words())
	}
	b.WriteString("      esac ;;\n  esac\n")
}

func bashCompletion(nodes []completionNode) string {
	var b strings.Builder
	b.WriteString(`# bash completion for payhook: source <(payhook completion bash),
# or save it as /usr/share/bash-completion/completions/payhook.
_payhook() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmdpath="" w i opts=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
`)
	shellCases(&b, nodes, "")
	b.WriteString(`  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _payhook payhook
`)
	return b.String()
}

func zshCompletion(nodes []completionNode) string {
	var b strings.Builder
	b.WriteString(`#compdef payhook
# zsh completion for payhook: source <(payhook completion zsh) after
# compinit, or save it as _payhook in a directory of $fpath.
_payhook() {
  local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}" cmdpath="" w i opts=""
  for ((i = 2; i < CURRENT; i++)); do
    w="${words[i]}"
    [[ "$w" == -* ]] && continue
`)
	shellCases(&b, nodes, "(")
	b.WriteString(`  compadd -- ${=opts}
}
if [[ "${funcstack[1]}" == "_payhook" ]]; then
  _payhook "$@"
else
  compdef _payhook payhook
fi
`)
	return b.String()
}

func fishCompletion(nodes []completionNode) string {
	var b strings.Builder
	b.WriteString(`# fish completion for payhook: payhook completion fish | source, or save
# it as ~/.config/fish/completions/payhook.fish.
complete -c payhook -f
complete -c payhook -l log-format -x -a "text json" -d "log format"
complete -c payhook -l log-level -x -a "debug info warn error" -d "log level"
`)
	for _, n := range nodes {
		var cond []string
		if len(n.path) == 0 {
			cond = append(cond, "__fish_use_subcommand")
		}
		for _, p := range n.path {
			cond = append(cond, "__fish_seen_subcommand_from "+p)
		}
		if len(n.subs) > 0 {
			if len(n.path) > 0 {
				cond = append(cond, "not __fish_seen_subcommand_from "+strings.Join(n.subs, " "))
			}
			fmt.Fprintf(&b, "complete -c payhook -n %q -a %q\n", strings.Join(cond, "; and "), strings.Join(n.subs, " "))
		}
		for _, f := range n.flags {
			fmt.Fprintf(&b, "complete -c payhook -n %q -l %s\n", strings.Join(cond, "; and "), strings.TrimPrefix(f, "--"))
		}
	}
	return b.String()
}
