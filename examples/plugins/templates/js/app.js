// {{name}}: an acp-gate permission plugin. Denies a `git commit` whose message does not name a
// ticket (`ABC-123`, of one of the projects in its config), in any spelling; asks when it cannot
// see the message; abstains on everything else.
//
// The host reads the command (`shell.parse`, the `shell` grant) as the built-in plugins read
// it: every simple command, through `&&`, pipes, `$(...)`, `bash -c`, quoting, `sudo`, `env`,
// `timeout` and other wrappers, with its program's name normalised (`/usr/bin/git` is `git`).
// Nothing here splits shell text by hand.
//
// WIT types in JavaScript (componentize-qjs): records are objects with camelCase keys, enums
// are strings ("execute"), a verdict is { tag: "deny", val: "why" } or { tag: "abstain" }, an
// import's `result` returns its ok value or throws its error, and throwing a string returns the
// `err` case (the host then applies on_error).

import log from "acp-gate:plugin/log@0.1.0";
import shell from "acp-gate:plugin/shell@0.1.0";

// git's global options that take a value (`git -C DIR commit`): the subcommand comes after.
const GIT_VALUED = ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"];

// Where the subcommand of a git command line is: the first word after git's global options.
function subcommandAt(argv) {
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === "--") return i + 1;
    if (!argv[i].startsWith("-")) return i;
    if (GIT_VALUED.includes(argv[i])) i++;
  }
  return argv.length;
}

// The messages of `git commit ARGS`: { texts } or { unseen: why }.
function messages(args) {
  const texts = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === "--") break;
    const long = /^--([a-z-]+)(=(.*))?$/s.exec(word);
    if (long) {
      const [, name, glued, value] = long;
      // git takes any unambiguous abbreviation: `--mess=TEXT`.
      if ("message".startsWith(name)) texts.push(glued ? value : args[++i] ?? "");
      else if (["file", "reuse-message", "reedit-message"].includes(name)) return { unseen: "the message comes from a file or another commit" };
      continue;
    }
    // A cluster of short options: `-m TEXT`, `-mTEXT`, `-am TEXT`; `-F FILE`, `-C COMMIT`.
    if (word.startsWith("-") && word.length > 1) {
      for (let k = 1; k < word.length; k++) {
        const letter = word[k];
        if ("FCc".includes(letter)) return { unseen: "the message comes from a file or another commit" };
        if (letter === "m" || letter === "t") {
          const value = k + 1 < word.length ? word.slice(k + 1) : args[++i] ?? "";
          if (letter === "m") texts.push(value);
          break;
        }
      }
    }
  }
  return { texts };
}

// Whether `text` names a ticket: KEY-123, KEY one of `projects` (or, with none, any upper-case key).
function namesTicket(text, projects) {
  for (const [, key] of text.matchAll(/([A-Z][A-Z0-9]+)-[0-9]/g)) {
    if (projects.length === 0 || projects.includes(key)) return true;
  }
  return false;
}

export const handler = {
  evaluate(request, configText) {
    const projects = JSON.parse(configText).projects ?? [];
    if (!Array.isArray(projects)) throw "invalid [handler.config]: `projects` must be a list";
    if (request.kind !== "execute" || !request.command) return { tag: "abstain" };
    let reading;
    try {
      reading = shell.parse(request.command);
    } catch (why) {
      return { tag: "ask", val: `cannot read the command: ${why}` };
    }
    let verdict = { tag: "abstain" };
    for (const command of reading.commands) {
      const at = subcommandAt(command.argv);
      if (command.program !== "git" || command.argv[at] !== "commit") continue;
      const args = command.argv.slice(at + 1);
      const found = command.dynamic ? { unseen: "part of it is only known when it runs" } : messages(args);
      if (found.unseen) {
        verdict = { tag: "ask", val: `cannot check the commit message for a ticket id: ${found.unseen}` };
      } else if (!namesTicket(found.texts.join("\n\n"), projects)) {
        const of = projects.length ? ` of ${projects.join(", ")}` : "";
        log.write("info", `no ticket in: ${command.argv.join(" ")}`);
        return { tag: "deny", val: `a commit message must name a ticket (like ABC-123)${of}: \`${command.argv.join(" ")}\`` };
      }
    }
    return verdict;
  },
};
