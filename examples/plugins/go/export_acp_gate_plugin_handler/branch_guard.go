// branch-guard: an acp-gate plugin in Go (Go's GOOS=wasip1 reactor, `wit-bindgen go`).
//
// Changes reach a protected branch through review: a `git push` that updates, force-pushes or
// deletes a branch named in the config (`main`, `release/*`) gets the config's verdict (deny
// by default), whatever the spelling: `git push origin main`, `HEAD:main`, `+topic:main`,
// `refs/heads/main`, `:main`, `--delete`, `--mirror`, after `git -C DIR`, inside `bash -c`,
// `sudo` or `&&`. A push whose branches cannot be seen (a plain `git push`, which pushes the
// current branch, `HEAD`, `--all`, a branch only known when it runs) is asked. Other pushes,
// dry runs, tags, and every other request get `abstain`.
//
// The host reads the command (`shell.Parse`, the `shell` grant) as the built-in plugins read
// it; this plugin reads only git's own options and refspecs.
//
// Config (the handler's [handler.config], delivered as JSON):
//
//	protected = ["main", "release/*"]   # path.Match patterns: `*` matches within one segment
//	verdict   = "deny"                  # or "ask" [default "deny"]
package export_acp_gate_plugin_handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
	log "wit_component/acp_gate_plugin_log"
	shell "wit_component/acp_gate_plugin_shell"
	types "wit_component/acp_gate_plugin_types"
)

type config struct {
	Protected []string `json:"protected"`
	Verdict   string   `json:"verdict"`
}

func readConfig(text string) (config, error) {
	cfg := config{Verdict: "deny"}
	decoder := json.NewDecoder(bytes.NewReader([]byte(text)))
	decoder.DisallowUnknownFields() // a typo must fail loudly, not turn the guard off
	if err := decoder.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("invalid [handler.config] (keys: protected, verdict): %v", err)
	}
	if len(cfg.Protected) == 0 {
		return cfg, fmt.Errorf("`protected` is empty: nothing to guard")
	}
	for _, pattern := range cfg.Protected {
		if _, err := path.Match(pattern, ""); err != nil {
			return cfg, fmt.Errorf("`protected`: bad pattern %q", pattern)
		}
	}
	if cfg.Verdict != "deny" && cfg.Verdict != "ask" {
		return cfg, fmt.Errorf("`verdict` must be \"deny\" or \"ask\", not %q", cfg.Verdict)
	}
	return cfg, nil
}

// git's global options that take a value (`git -C DIR push`): the subcommand comes after.
var gitValued = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}

// subcommandAt is where the subcommand of a git command line is.
func subcommandAt(argv []string) int {
	for i := 1; i < len(argv); i++ {
		if argv[i] == "--" {
			return i + 1
		}
		if !strings.HasPrefix(argv[i], "-") {
			return i
		}
		if slices.Contains(gitValued, argv[i]) {
			i++
		}
	}
	return len(argv)
}

// A push of one branch, as a refspec names it.
type update struct {
	branch string
	force  bool // `+refspec`, or --force and friends
	delete bool // `:branch`, or --delete
}

// What `git push ARGS` does to branches: the updates it names, or why they cannot be seen
// (unseen), or that it pushes no branch at all (none).
type push struct {
	updates []update
	unseen  string
	mirror  bool
	none    bool
}

// `git push` options that take the next word as their value.
var pushValued = []string{"--repo", "--push-option", "--receive-pack", "--exec"}

func readPush(args []string) push {
	var (
		force, del, all, tags, dry bool
		mirror                     bool
		operands                   []string
	)
	for i := 0; i < len(args); i++ {
		word := args[i]
		switch {
		case word == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(word, "--"):
			name, _, _ := strings.Cut(word, "=")
			switch name {
			case "--force", "--force-with-lease", "--force-if-includes":
				force = true
			case "--delete":
				del = true
			case "--mirror":
				mirror = true
			case "--all", "--branches":
				all = true
			case "--tags":
				tags = true
			case "--dry-run":
				dry = true
			default:
				if slices.Contains(pushValued, word) {
					i++
				}
			}
		case strings.HasPrefix(word, "-") && len(word) > 1:
			// A cluster of short options: `-f`, `-uf`, `-d`, `-n`; `-o OPTION` takes a value.
			for k := 1; k < len(word); k++ {
				switch word[k] {
				case 'f':
					force = true
				case 'd':
					del = true
				case 'n':
					dry = true
				case 'o':
					if k == len(word)-1 {
						i++
					}
					k = len(word)
				}
			}
		default:
			operands = append(operands, word)
		}
	}
	if dry {
		return push{none: true}
	}
	if mirror {
		return push{mirror: true}
	}
	var refspecs []string
	if len(operands) > 1 {
		refspecs = operands[1:] // the first is the remote
	}
	if len(refspecs) == 0 {
		switch {
		case all:
			return push{unseen: "it pushes every local branch"}
		case tags:
			return push{none: true}
		default:
			return push{unseen: "it pushes the current branch, which a plugin cannot see"}
		}
	}
	var p push
	for _, refspec := range refspecs {
		plus := strings.HasPrefix(refspec, "+")
		source, destination, paired := strings.Cut(strings.TrimPrefix(refspec, "+"), ":")
		if !paired {
			destination = source
		}
		if strings.HasPrefix(destination, "refs/tags/") {
			continue
		}
		branch := strings.TrimPrefix(destination, "refs/heads/")
		switch branch {
		case "":
			p.unseen = fmt.Sprintf("`%s` pushes every branch the remote also has", refspec)
			continue
		case "HEAD", "@":
			p.unseen = fmt.Sprintf("`%s` pushes the current branch, which a plugin cannot see", refspec)
			continue
		}
		p.updates = append(p.updates, update{
			branch: branch,
			force:  force || plus,
			delete: del || (paired && source == ""),
		})
	}
	if all && p.unseen == "" {
		p.unseen = "it pushes every local branch"
	}
	return p
}

func protected(branch string, patterns []string) (string, bool) {
	for _, pattern := range patterns {
		if ok, _ := path.Match(pattern, branch); ok {
			return pattern, true
		}
	}
	return "", false
}

func verdict(kind, reason string) types.Verdict {
	if kind == "ask" {
		return types.MakeVerdictAsk(reason)
	}
	return types.MakeVerdictDeny(reason)
}

// Evaluate judges one request.
func Evaluate(request types.Request, configJSON string) witTypes.Result[types.Verdict, string] {
	ok := witTypes.Ok[types.Verdict, string]
	cfg, err := readConfig(configJSON)
	if err != nil {
		return witTypes.Err[types.Verdict](err.Error())
	}
	if request.Kind != types.ToolKindExecute || !request.Command.IsSome() {
		return ok(types.MakeVerdictAbstain())
	}
	reading := shell.Parse(request.Command.Some())
	if reading.IsErr() {
		return ok(types.MakeVerdictAsk("cannot read the command: " + reading.Err()))
	}
	answer := types.MakeVerdictAbstain()
	for _, command := range reading.Ok().Commands {
		at := subcommandAt(command.Argv)
		if command.Program != "git" || at >= len(command.Argv) || command.Argv[at] != "push" {
			continue
		}
		line := strings.Join(command.Argv, " ")
		if command.Dynamic {
			answer = types.MakeVerdictAsk(fmt.Sprintf("cannot see which branches `%s` pushes: part of it is only known when it runs", line))
			continue
		}
		p := readPush(command.Argv[at+1:])
		if p.mirror {
			log.Write(log.LevelInfo, "mirror push: "+line)
			return ok(verdict(cfg.Verdict, fmt.Sprintf("`%s` overwrites and deletes every branch on the remote, protected ones included", line)))
		}
		for _, u := range p.updates {
			pattern, hit := protected(u.branch, cfg.Protected)
			if !hit {
				continue
			}
			what := "pushes to"
			if u.delete {
				what = "deletes"
			} else if u.force {
				what = "force-pushes"
			}
			log.Write(log.LevelInfo, fmt.Sprintf("%s %s: %s", what, u.branch, line))
			return ok(verdict(cfg.Verdict, fmt.Sprintf(
				"`%s` %s the protected branch `%s` (matches `%s`): changes reach it through review", line, what, u.branch, pattern)))
		}
		if p.unseen != "" {
			answer = types.MakeVerdictAsk(fmt.Sprintf("cannot see which branches `%s` pushes: %s", line, p.unseen))
		}
	}
	return ok(answer)
}
