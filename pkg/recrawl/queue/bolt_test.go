package queue

import "github.com/sekitei/crawlkit/pkg/boltstate"

type boltTx = boltstate.Tx
