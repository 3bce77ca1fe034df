// The misbehaving plugin of tests/plugins/misbehaving, in Go: each request's title picks how it
// misbehaves, so that one handler can fail on one request and answer the next. It shows that
// what the Go runtime does when it fails (a panic, a fatal error, memory it cannot get) and
// what the bindings pass back when a plugin hands them nonsense are contained like a Rust
// plugin's failures (tests/examples.rs).
package export_acp_gate_plugin_handler

import (
	"fmt"
	"strings"
	"time"
	"unsafe"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
	log "wit_component/acp_gate_plugin_log"
	types "wit_component/acp_gate_plugin_types"
)

var calls int

var hoard [][]byte

func Evaluate(request types.Request, config string) witTypes.Result[types.Verdict, string] {
	ok := witTypes.Ok[types.Verdict, string]
	switch request.Title {
	case "allow":
		return ok(types.MakeVerdictAllow())
	case "loop":
		for n := 0; ; n++ {
			calls += n
		}
	case "alloc":
		for {
			hoard = append(hoard, make([]byte, 1<<20))
		}
	case "panic":
		panic("the plugin panicked on purpose")
	case "nil-map":
		var m map[string]int
		m[request.Title]++
	case "index":
		return ok(types.MakeVerdictDeny(request.Options[7].Name))
	case "deadlock": // no other goroutine will ever send: the runtime's fatal "all goroutines are asleep"
		<-make(chan int)
	case "sleep": // the runtime waits through poll_oneoff, which wasi-stub.wat refuses
		time.Sleep(time.Millisecond)
		return ok(types.MakeVerdictAllow())
	case "error":
		return witTypes.Err[types.Verdict]("cannot judge this")
	case "bad-utf8":
		return ok(types.MakeVerdictDeny("\xff\xfe not UTF-8"))
	case "wild-pointer":
		// A reason whose bytes are past the end of the plugin's memory.
		wild := unsafe.String((*byte)(unsafe.Pointer(uintptr(0xFFFF_FF00))), 4096)
		return ok(types.MakeVerdictAsk(wild))
	case "bad-tag":
		// A verdict whose case is none of the four: the bindings refuse to send it.
		verdict := types.MakeVerdictAbstain()
		*(*uint8)(unsafe.Pointer(&verdict)) = 9
		return ok(verdict)
	case "huge-reason":
		return ok(types.MakeVerdictDeny(strings.Repeat("x", 10<<20)))
	case "count": // a global: a fresh instance per request always says 1
		calls++
		return ok(types.MakeVerdictAsk(fmt.Sprintf("call %d", calls)))
	case "clock": // the stubbed clock: 1970, whatever the time
		return ok(types.MakeVerdictAsk(time.Now().UTC().Format(time.RFC3339)))
	case "log":
		log.Write(log.LevelInfo, "hello from the plugin")
		return ok(types.MakeVerdictAbstain())
	}
	return witTypes.Err[types.Verdict]("unknown behaviour " + request.Title)
}
