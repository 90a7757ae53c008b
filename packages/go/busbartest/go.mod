module github.com/busbar-rs/busbar/packages/go/busbartest

go 1.21
