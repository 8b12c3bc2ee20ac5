module kairos

go 1.26.0

require (
	github.com/klauspost/compress v1.20.4
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
