// {{name}}: an acp-gate permission plugin in Go. Denies a `git commit` whose message does not
// name a ticket (`ABC-123`, of one of the projects in its config), in any spelling; asks when
// it cannot see the message; abstains on everything else.
//
// The host reads the command (`shell.Parse`, the `shell` grant) as the built-in plugins read
// it: every simple command, through `&&`, pipes, `$(...)`, `bash -c`, quoting, `sudo`, `env`,
// `timeout` and other wrappers, with its program's name normalised (`/usr/bin/git` is `git`).
// Nothing here splits shell text by hand.
//
// The bindings come from `wit-bindgen go wit --world plugin` (build.sh writes them into this
// project: the acp_gate_plugin_* packages and wit_exports.go). They call `Evaluate` in this
// package, whose name is theirs for the export of `acp-gate:plugin/handler`. Records are
// structs, enums are uint8 constants (`types.ToolKindExecute`), an option is a
// `witTypes.Option` (IsSome, Some), a verdict is made by `types.MakeVerdictDeny("why")`, an
// import's `result` comes back as a `witTypes.Result` (IsErr, Ok, Err), and returning
// `witTypes.Err` sends `err` (the host then applies on_error; a panic traps, and does too).
// There is no clock (time.Now is 1970) and no randomness: see wasi-stub.wat.
package export_acp_gate_plugin_handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
	log "wit_component/acp_gate_plugin_log"
	shell "wit_component/acp_gate_plugin_shell"
	types "wit_component/acp_gate_plugin_types"
)

type result = witTypes.Result[types.Verdict, string]

// The handler's [handler.config], as JSON.
type config struct {
	// Ticket ids are KEY-123 with KEY one of these (with none: any upper-case key).
	Projects []string `json:"projects"`
}

// git's global options that take a value (`git -C DIR commit`): the subcommand comes after.
var gitValued = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}

const fromElsewhere = "the message comes from a file or another commit"

var ticket = regexp.MustCompile(`([A-Z][A-Z0-9]+)-[0-9]`)

// subcommandAt is where the subcommand of a git command line is: the first word after git's
// global options.
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

// messages are the messages of `git commit ARGS`, or why they cannot be seen.
func messages(args []string) (texts []string, unseen string) {
	// next takes the word after an option that wants a value ("" when there is none).
	next := func(i *int) string {
		*i++
		if *i < len(args) {
			return args[*i]
		}
		return ""
	}
	for i := 0; i < len(args); i++ {
		word := args[i]
		if word == "--" {
			break
		}
		if name, ok := strings.CutPrefix(word, "--"); ok {
			name, value, glued := strings.Cut(name, "=")
			switch {
			case name != "" && strings.HasPrefix("message", name): // any abbreviation git takes
				if !glued {
					value = next(&i)
				}
				texts = append(texts, value)
			case name == "file" || name == "reuse-message" || name == "reedit-message":
				return texts, fromElsewhere
			}
			continue
		}
		if !strings.HasPrefix(word, "-") || len(word) == 1 {
			continue
		}
		// A cluster of short options: `-m TEXT`, `-mTEXT`, `-am TEXT`; `-F FILE`, `-C COMMIT`.
		for k := 1; k < len(word); k++ {
			letter := word[k]
			if strings.IndexByte("FCc", letter) >= 0 {
				return texts, fromElsewhere
			}
			if letter == 'm' || letter == 't' {
				value := word[k+1:]
				if value == "" {
					value = next(&i)
				}
				if letter == 'm' {
					texts = append(texts, value)
				}
				break
			}
		}
	}
	return texts, ""
}

// namesTicket says whether text names a ticket: KEY-123, KEY one of projects (or, with none,
// any upper-case key).
func namesTicket(text string, projects []string) bool {
	for _, match := range ticket.FindAllStringSubmatch(text, -1) {
		if len(projects) == 0 || slices.Contains(projects, match[1]) {
			return true
		}
	}
	return false
}

// Evaluate judges one request.
func Evaluate(request types.Request, configJSON string) result {
	var cfg config
	decoder := json.NewDecoder(bytes.NewReader([]byte(configJSON)))
	decoder.DisallowUnknownFields() // a typo in a policy must fail loudly, not turn a rule off
	if err := decoder.Decode(&cfg); err != nil {
		return witTypes.Err[types.Verdict](fmt.Sprintf("invalid [handler.config]: %v", err))
	}
	if request.Kind != types.ToolKindExecute || !request.Command.IsSome() {
		return witTypes.Ok[types.Verdict, string](types.MakeVerdictAbstain())
	}
	reading := shell.Parse(request.Command.Some())
	if reading.IsErr() {
		return witTypes.Ok[types.Verdict, string](types.MakeVerdictAsk("cannot read the command: " + reading.Err()))
	}
	verdict := types.MakeVerdictAbstain()
	for _, command := range reading.Ok().Commands {
		at := subcommandAt(command.Argv)
		if command.Program != "git" || at >= len(command.Argv) || command.Argv[at] != "commit" {
			continue
		}
		texts, unseen := []string(nil), "part of it is only known when it runs"
		if !command.Dynamic {
			texts, unseen = messages(command.Argv[at+1:])
		}
		if unseen != "" {
			verdict = types.MakeVerdictAsk("cannot check the commit message for a ticket id: " + unseen)
		} else if !namesTicket(strings.Join(texts, "\n\n"), cfg.Projects) {
			line := strings.Join(command.Argv, " ")
			of := ""
			if len(cfg.Projects) > 0 {
				of = " of " + strings.Join(cfg.Projects, ", ")
			}
			log.Write(log.LevelInfo, "no ticket in: "+line)
			return witTypes.Ok[types.Verdict, string](types.MakeVerdictDeny(
				fmt.Sprintf("a commit message must name a ticket (like ABC-123)%s: `%s`", of, line)))
		}
	}
	return witTypes.Ok[types.Verdict, string](verdict)
}
