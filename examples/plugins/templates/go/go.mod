// `wit_component` is the module name wit-bindgen's Go bindings import themselves by.
module wit_component

go 1.25

// The component-model runtime the bindings call (wit-bindgen-cli 0.61.1's pinned version),
// from the Go module proxy; go.sum pins its hash.
require go.bytecodealliance.org/pkg v0.2.3
