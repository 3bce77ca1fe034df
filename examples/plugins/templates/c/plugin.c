// {{name}}: an acp-gate permission plugin in C. Asks before any command that mentions one of
// the words in its config; abstains on everything else.
//
// The bindings (bindings/plugin.h) come from `wit-bindgen c wit --world plugin`: strings are
// plugin_string_t { ptr, len } (not NUL-terminated), options have is_some/val, a verdict is
// a tag with its reason in val.ask / val.deny. Returning false sends `err` (the host then
// applies on_error). Avoid stdio (printf, snprintf): through the preview1 adapter it makes the
// component import WASI files and streams, which need grants.

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

#define MAX_TEXT 4096

static void copy(char *out, const plugin_string_t *in) {
    size_t n = in->len < MAX_TEXT - 1 ? in->len : MAX_TEXT - 1;
    memcpy(out, in->ptr, n);
    out[n] = '\0';
}

// The next string in a JSON list, from `*cursor`; a tiny reader for {"words": ["a", "b"]}
// (escapes are not decoded).
static bool next_word(const char **cursor, char *out, size_t size) {
    const char *p = *cursor;
    while (*p && *p != '"' && *p != ']') p++;
    if (*p != '"') return false;
    const char *end = ++p;
    while (*end && *end != '"') end += (*end == '\\' && end[1]) ? 2 : 1;
    size_t n = (size_t)(end - p) < size - 1 ? (size_t)(end - p) : size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    *cursor = *end ? end + 1 : end;
    return true;
}

bool exports_acp_gate_plugin_handler_evaluate(
    exports_acp_gate_plugin_handler_request_t *request,
    plugin_string_t *config_json,
    exports_acp_gate_plugin_handler_verdict_t *ret,
    plugin_string_t *err) {
    static char config[MAX_TEXT], command[MAX_TEXT], word[256], reason[512];
    copy(config, config_json);
    const char *list = strstr(config, "\"words\"");
    if (list == NULL || (list = strchr(list, '[')) == NULL) {
        plugin_string_dup(err, "invalid [handler.config]: `words` (a list of strings) is missing");
        return false;
    }

    ret->tag = ACP_GATE_PLUGIN_TYPES_VERDICT_ABSTAIN;
    if (request->kind != ACP_GATE_PLUGIN_TYPES_TOOL_KIND_EXECUTE || !request->command.is_some) {
        return true;
    }
    acp_gate_plugin_types_command_line_t *line = &request->command.val;
    command[0] = '\0';
    if (line->shell.is_some) {
        copy(command, &line->shell.val);
    } else if (line->argv.is_some) {
        for (size_t i = 0; i < line->argv.val.len; i++) {
            size_t used = strlen(command), n = line->argv.val.ptr[i].len;
            if (used + n + 2 >= MAX_TEXT) break;
            memcpy(command + used, line->argv.val.ptr[i].ptr, n);
            strcpy(command + used + n, " ");
        }
    }

    const char *cursor = list + 1;
    while (next_word(&cursor, word, sizeof word)) {
        if (word[0] != '\0' && strstr(command, word) != NULL) {
            strcpy(reason, "the command mentions `");
            strncat(reason, word, sizeof reason - strlen(reason) - 3);
            strcat(reason, "`");
            plugin_string_t message;
            plugin_string_set(&message, reason);
            acp_gate_plugin_log_write(ACP_GATE_PLUGIN_LOG_LEVEL_INFO, &message);
            ret->tag = ACP_GATE_PLUGIN_TYPES_VERDICT_ASK;
            plugin_string_dup(&ret->val.ask, reason);
            return true;
        }
    }
    return true;
}
