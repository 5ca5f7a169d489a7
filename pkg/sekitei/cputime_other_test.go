//go:build !unix

package sekitei

import "time"

func cpuTime() time.Duration { return 0 }
