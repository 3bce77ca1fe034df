// prod-guard: an acp-gate plugin in C (clang + wasi-libc, `wit-bindgen c`).
//
// Asks before any command that touches a production host named in its config:
// `ssh deploy@prod-db-1`, `scp dump.sql prod-db-1:/tmp`, `kubectl --context=prod get pods`,
// `curl https://prod-api.internal/health`, also inside `bash -c '...'` and pipelines.
// Every word of the command is taken apart the way those tools name a host (`user@host`,
// `host:path`, `scheme://host:port/`, `--flag=value`) and matched against the configured
// patterns, both whole (`prod-db-1.example.com`) and by its first label (`prod-db-1`).
// Everything else, and every request that is not a command, gets `abstain`.
//
// Config (the handler's [handler.config], delivered as JSON):
//   hosts   = ["prod-*", "db-primary"]   # patterns; `*` matches any run of characters
//   verdict = "ask"                      # or "deny" [default "ask"]

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define MAX_HOSTS 64
#define MAX_TEXT 4096

// Messages are built with `add`, not snprintf: stdio would make the component import WASI
// files, clocks and streams (through the preview1 adapter), and need grants for them.
static void add(char *out, size_t size, const char *text) {
    size_t used = strlen(out);
    size_t n = strlen(text);
    if (used + n >= size) n = size - used - 1;
    memcpy(out + used, text, n);
    out[used + n] = '\0';
}

static void say(char *out, size_t size, const char *a, const char *b, const char *c) {
    out[0] = '\0';
    add(out, size, a);
    add(out, size, b);
    add(out, size, c);
}

struct config {
    char *hosts[MAX_HOSTS];
    size_t count;
    bool deny;
};

// ---- a minimal JSON reader: just enough for {"hosts": [...], "verdict": "..."} ----

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

// Reads a JSON string at `p` (which must point at its opening quote) into a new buffer.
static const char *read_string(const char *p, char **out) {
    if (*p != '"') return NULL;
    p++;
    char *buffer = malloc(strlen(p) + 1), *w = buffer;
    while (*p && *p != '"') {
        if (*p == '\\' && p[1]) {
            p++;
            switch (*p) {
                case 'n': *w++ = '\n'; break;
                case 't': *w++ = '\t'; break;
                default: *w++ = *p; break;  // \" \\ \/ ; \u escapes are kept as written
            }
            p++;
        } else {
            *w++ = *p++;
        }
    }
    if (*p != '"') { free(buffer); return NULL; }
    *w = '\0';
    *out = buffer;
    return p + 1;
}

// Parses the config; on error writes a message into `error` and returns false.
static bool parse_config(const char *json, struct config *config, char *error, size_t size) {
    memset(config, 0, sizeof *config);
    const char *p = skip_space(json);
    if (*p++ != '{') { say(error, size, "the config is not a JSON object", "", ""); return false; }
    for (;;) {
        p = skip_space(p);
        if (*p == '}') break;
        char *key = NULL;
        if (!(p = read_string(p, &key))) { say(error, size, "bad JSON", "", ""); return false; }
        p = skip_space(p);
        if (*p++ != ':') { free(key); say(error, size, "bad JSON", "", ""); return false; }
        p = skip_space(p);
        if (strcmp(key, "hosts") == 0 && *p == '[') {
            p = skip_space(p + 1);
            while (*p != ']') {
                if (config->count == MAX_HOSTS) { say(error, size, "more than 64 hosts", "", ""); free(key); return false; }
                if (!(p = read_string(p, &config->hosts[config->count++]))) {
                    say(error, size, "`hosts` must be a list of strings", "", ""); free(key); return false;
                }
                p = skip_space(p);
                if (*p == ',') p = skip_space(p + 1);
            }
            p++;
        } else if (strcmp(key, "verdict") == 0 && *p == '"') {
            char *value = NULL;
            p = read_string(p, &value);
            if (!p || (strcmp(value, "ask") != 0 && strcmp(value, "deny") != 0)) {
                say(error, size, "`verdict` must be \"ask\" or \"deny\"", "", ""); free(key); return false;
            }
            config->deny = strcmp(value, "deny") == 0;
            free(value);
        } else {
            say(error, size, "unknown key `", key, "` (keys: hosts, verdict)"); free(key); return false;
        }
        free(key);
        p = skip_space(p);
        if (*p == ',') p++;
    }
    if (config->count == 0) { say(error, size, "`hosts` is empty: nothing to guard", "", ""); return false; }
    return true;
}

// ---- matching ----

// Glob match: `*` matches any run of characters (case-insensitive, like host names).
static bool glob(const char *pattern, const char *text) {
    if (*pattern == '\0') return *text == '\0';
    if (*pattern == '*') return glob(pattern + 1, text) || (*text && glob(pattern, text + 1));
    char a = *pattern, b = *text;
    if (a >= 'A' && a <= 'Z') a += 'a' - 'A';
    if (b >= 'A' && b <= 'Z') b += 'a' - 'A';
    return *text && a == b && glob(pattern + 1, text + 1);
}

// The host a word names, if any: drops `--flag=`, `scheme://`, `user@`, `:port`, `:path`, `/path`.
static void host_of(const char *word, char *host, size_t size) {
    const char *start = word;
    const char *equals = strchr(start, '=');
    if (equals) start = equals + 1;
    const char *scheme = strstr(start, "://");
    if (scheme) start = scheme + 3;
    const char *at = strrchr(start, '@');
    if (at) start = at + 1;
    size_t length = strcspn(start, ":/");
    if (length >= size) length = size - 1;
    memcpy(host, start, length);
    host[length] = '\0';
}

// The first configured pattern the host named by `word` matches, or NULL.
static const char *match(const struct config *config, const char *word, char *host, size_t size) {
    host_of(word, host, size);
    if (host[0] == '\0') return NULL;
    char label[256];
    size_t length = strcspn(host, ".");
    if (length >= sizeof label) length = sizeof label - 1;
    memcpy(label, host, length);
    label[length] = '\0';
    for (size_t i = 0; i < config->count; i++) {
        if (glob(config->hosts[i], host) || glob(config->hosts[i], label)) return config->hosts[i];
    }
    return NULL;
}

// ---- the export ----

static void set_string(plugin_string_t *out, const char *text) {
    plugin_string_dup(out, text);
}

static void log_info(const char *text) {
    plugin_string_t message;
    plugin_string_set(&message, text);
    acp_gate_plugin_log_write(ACP_GATE_PLUGIN_LOG_LEVEL_INFO, &message);
}

bool exports_acp_gate_plugin_handler_evaluate(
    exports_acp_gate_plugin_handler_request_t *request,
    plugin_string_t *config_json,
    exports_acp_gate_plugin_handler_verdict_t *ret,
    plugin_string_t *err) {
    char error[256], config_text[MAX_TEXT];
    size_t length = config_json->len < MAX_TEXT - 1 ? config_json->len : MAX_TEXT - 1;
    memcpy(config_text, config_json->ptr, length);
    config_text[length] = '\0';

    struct config config;
    if (!parse_config(config_text, &config, error, sizeof error)) {
        char message[300];
        say(message, sizeof message, "invalid [handler.config]: ", error, "");
        set_string(err, message);
        return false;
    }

    ret->tag = ACP_GATE_PLUGIN_TYPES_VERDICT_ABSTAIN;
    if (request->kind != ACP_GATE_PLUGIN_TYPES_TOOL_KIND_EXECUTE || !request->command.is_some) {
        return true;
    }
    // The command as one string: the shell text, or the argv words joined by spaces.
    static char command[MAX_TEXT];
    command[0] = '\0';
    acp_gate_plugin_types_command_line_t *line = &request->command.val;
    if (line->shell.is_some) {
        size_t n = line->shell.val.len < MAX_TEXT - 1 ? line->shell.val.len : MAX_TEXT - 1;
        memcpy(command, line->shell.val.ptr, n);
        command[n] = '\0';
    } else if (line->argv.is_some) {
        for (size_t i = 0; i < line->argv.val.len; i++) {
            plugin_string_t *word = &line->argv.val.ptr[i];
            size_t used = strlen(command);
            if (used + word->len + 2 >= MAX_TEXT) break;
            memcpy(command + used, word->ptr, word->len);
            command[used + word->len] = ' ';
            command[used + word->len + 1] = '\0';
        }
    }

    char host[256];
    for (char *word = strtok(command, " \t\n;|&()<>'\"`$"); word; word = strtok(NULL, " \t\n;|&()<>'\"`$")) {
        const char *pattern = match(&config, word, host, sizeof host);
        if (pattern) {
            char reason[600];
            say(reason, sizeof reason, "the command touches production host `", host, "` (matches `");
            add(reason, sizeof reason, pattern);
            add(reason, sizeof reason, "`)");
            log_info(reason);
            ret->tag = config.deny ? ACP_GATE_PLUGIN_TYPES_VERDICT_DENY : ACP_GATE_PLUGIN_TYPES_VERDICT_ASK;
            if (config.deny) set_string(&ret->val.deny, reason); else set_string(&ret->val.ask, reason);
            return true;
        }
    }
    return true;
}
