// {{name}}: an acp-gate permission plugin in C. Denies a `git commit` whose message does not
// name a ticket (`ABC-123`, of one of the projects in its config), in any spelling; asks when
// it cannot see the message; abstains on everything else.
//
// The host reads the command (`acp_gate_plugin_shell_parse`, the `shell` grant) as the built-in
// plugins read it: every simple command, through `&&`, pipes, `$(...)`, `bash -c`, quoting,
// `sudo`, `env`, `timeout` and other wrappers, with its program's name normalised
// (`/usr/bin/git` is `git`). Nothing here splits shell text by hand.
//
// The bindings (bindings/plugin.h) come from `wit-bindgen c wit --world plugin`: strings are
// plugin_string_t { ptr, len } (not NUL-terminated), lists { ptr, len }, options have
// is_some/val, a verdict is a tag with its reason in val.ask / val.deny, and an import's result
// comes back through its `ret` (ok) or `err` argument, which the caller frees. Returning false
// sends `err` (the host then applies on_error). Avoid stdio (printf, snprintf): through the
// preview1 adapter it makes the component import WASI files and streams, which need grants.

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define MAX_TEXT 4096
#define MAX_PROJECTS 32

typedef plugin_string_t text_t;

static bool is(const text_t *s, const char *literal) {
    return s->len == strlen(literal) && memcmp(s->ptr, literal, s->len) == 0;
}

static bool begins(const text_t *s, const char *literal) {
    return s->len >= strlen(literal) && memcmp(s->ptr, literal, strlen(literal)) == 0;
}

// `out` (of `size` bytes, NUL-terminated) with `n` bytes of `in` appended, as room allows.
static void append(char *out, size_t size, const uint8_t *in, size_t n) {
    size_t used = strlen(out);
    if (used + 1 >= size) return;
    if (n > size - used - 1) n = size - used - 1;
    memcpy(out + used, in, n);
    out[used + n] = '\0';
}

// The ticket projects of the config ({"projects": ["ABC", "OPS"]}; escapes are not decoded).
static int projects[MAX_PROJECTS][2];  // offsets into `config`: start, length
static char config[MAX_TEXT];

static int read_projects(void) {
    int count = 0;
    const char *p = strstr(config, "\"projects\"");
    if (p == NULL || (p = strchr(p, '[')) == NULL) return 0;
    while (*p && *p != ']' && count < MAX_PROJECTS) {
        if (*p++ != '"') continue;
        const char *end = p;
        while (*end && *end != '"') end++;
        projects[count][0] = (int)(p - config);
        projects[count][1] = (int)(end - p);
        count++;
        p = *end ? end + 1 : end;
    }
    return count;
}

// Whether `message` names a ticket: KEY-123, KEY one of the projects (or, with none, any
// upper-case key of two characters or more).
static bool names_ticket(const uint8_t *message, size_t len, int project_count) {
    for (size_t dash = 1; dash + 1 < len; dash++) {
        if (message[dash] != '-' || message[dash + 1] < '0' || message[dash + 1] > '9') continue;
        size_t start = dash;
        while (start > 0 && ((message[start - 1] >= 'A' && message[start - 1] <= 'Z') ||
                             (message[start - 1] >= '0' && message[start - 1] <= '9')))
            start--;
        size_t key = dash - start;
        if (project_count == 0 && key >= 2 && message[start] >= 'A' && message[start] <= 'Z')
            return true;
        for (int i = 0; i < project_count; i++)
            if ((size_t)projects[i][1] == key && memcmp(config + projects[i][0], message + start, key) == 0)
                return true;
    }
    return false;
}

// git's global options that take a value (`git -C DIR commit`): the subcommand comes after.
static const char *GIT_VALUED[] = {"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                   "--config-env", "--super-prefix", NULL};

// Where the subcommand of a git command line is: the first word after git's global options.
static size_t subcommand_at(const plugin_list_string_t *argv) {
    for (size_t i = 1; i < argv->len; i++) {
        const text_t *word = &argv->ptr[i];
        if (is(word, "--")) return i + 1;
        if (!begins(word, "-")) return i;
        for (const char **v = GIT_VALUED; *v; v++)
            if (is(word, *v)) i++;
    }
    return argv->len;
}

enum found { NO_TICKET, TICKET, UNSEEN };

// What the messages of `git commit ARGS` (argv[from..]) say: a ticket, none, or nothing seen.
static enum found commit_messages(const plugin_list_string_t *argv, size_t from, int project_count) {
    bool ticket = false;
    for (size_t i = from; i < argv->len; i++) {
        const text_t *word = &argv->ptr[i];
        const uint8_t *value = NULL;
        size_t value_len = 0;
        if (is(word, "--")) break;
        if (begins(word, "--")) {
            const uint8_t *eq = memchr(word->ptr, '=', word->len);
            size_t name = (eq ? (size_t)(eq - word->ptr) : word->len) - 2;
            if (name > 0 && name <= 7 && memcmp(word->ptr + 2, "message", name) == 0) {
                // `--message TEXT`, `--message=TEXT`, or an abbreviation git accepts.
                if (eq) {
                    value = eq + 1;
                    value_len = word->len - (size_t)(eq + 1 - word->ptr);
                } else if (++i < argv->len) {
                    value = argv->ptr[i].ptr;
                    value_len = argv->ptr[i].len;
                }
            } else if (begins(word, "--file") || begins(word, "--reuse-message") ||
                       begins(word, "--reedit-message")) {
                return UNSEEN;
            }
        } else if (begins(word, "-") && word->len > 1) {
            // A cluster of short options: `-m TEXT`, `-mTEXT`, `-am TEXT`; `-F FILE`, `-C COMMIT`.
            for (size_t k = 1; k < word->len; k++) {
                uint8_t letter = word->ptr[k];
                if (letter == 'F' || letter == 'C' || letter == 'c') return UNSEEN;
                if (letter != 'm' && letter != 't') continue;
                if (k + 1 < word->len) {
                    value = word->ptr + k + 1;
                    value_len = word->len - k - 1;
                } else if (++i < argv->len) {
                    value = argv->ptr[i].ptr;
                    value_len = argv->ptr[i].len;
                }
                if (letter == 't') value = NULL;
                break;
            }
        }
        if (value != NULL && names_ticket(value, value_len, project_count)) ticket = true;
    }
    // No message at all: git opens an editor, which an agent cannot use.
    return ticket ? TICKET : NO_TICKET;
}

bool exports_acp_gate_plugin_handler_evaluate(
    exports_acp_gate_plugin_handler_request_t *request,
    plugin_string_t *config_json,
    exports_acp_gate_plugin_handler_verdict_t *ret,
    plugin_string_t *err) {
    static char reason[MAX_TEXT];
    size_t n = config_json->len < MAX_TEXT - 1 ? config_json->len : MAX_TEXT - 1;
    memcpy(config, config_json->ptr, n);
    config[n] = '\0';
    int project_count = read_projects();

    ret->tag = ACP_GATE_PLUGIN_TYPES_VERDICT_ABSTAIN;
    if (request->kind != ACP_GATE_PLUGIN_TYPES_TOOL_KIND_EXECUTE || !request->command.is_some) {
        return true;
    }
    acp_gate_plugin_shell_reading_t reading;
    plugin_string_t why;
    if (!acp_gate_plugin_shell_parse(&request->command.val, &reading, &why)) {
        strcpy(reason, "cannot read the command: ");
        append(reason, sizeof reason, why.ptr, why.len);
        plugin_string_free(&why);
        ret->tag = ACP_GATE_PLUGIN_TYPES_VERDICT_ASK;
        plugin_string_dup(&ret->val.ask, reason);
        return true;
    }
    for (size_t c = 0; c < reading.commands.len; c++) {
        acp_gate_plugin_shell_simple_command_t *command = &reading.commands.ptr[c];
        size_t at = subcommand_at(&command->argv);
        if (!is(&command->program, "git") || at >= command->argv.len ||
            !is(&command->argv.ptr[at], "commit")) {
            continue;
        }
        enum found found = command->dynamic ? UNSEEN : commit_messages(&command->argv, at + 1, project_count);
        if (found == UNSEEN && ret->tag == ACP_GATE_PLUGIN_TYPES_VERDICT_ABSTAIN) {
            ret->tag = ACP_GATE_PLUGIN_TYPES_VERDICT_ASK;
            plugin_string_dup(&ret->val.ask,
                              "cannot check the commit message for a ticket id: it is not on the command line");
        } else if (found == NO_TICKET) {
            if (ret->tag == ACP_GATE_PLUGIN_TYPES_VERDICT_ASK) plugin_string_free(&ret->val.ask);
            strcpy(reason, "a commit message must name a ticket (like ABC-123): `");
            for (size_t w = 0; w < command->argv.len; w++) {
                if (w > 0) append(reason, sizeof reason, (const uint8_t *)" ", 1);
                append(reason, sizeof reason, command->argv.ptr[w].ptr, command->argv.ptr[w].len);
            }
            append(reason, sizeof reason, (const uint8_t *)"`", 1);
            plugin_string_t message;
            plugin_string_set(&message, reason);
            acp_gate_plugin_log_write(ACP_GATE_PLUGIN_LOG_LEVEL_INFO, &message);
            ret->tag = ACP_GATE_PLUGIN_TYPES_VERDICT_DENY;
            plugin_string_dup(&ret->val.deny, reason);
            break;
        }
    }
    acp_gate_plugin_shell_reading_free(&reading);
    (void)err;
    return true;
}
