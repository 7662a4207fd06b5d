package main

import (
	"net"
	"sync"
	"time"
)

// latencyProxy forwards TCP connections to an address, holding every chunk of data back
// by delay in each direction, so that a request and its answer take 2*delay longer: a
// cluster far away. TLS passes through untouched. Throughput is not limited: chunks
// are delayed, not serialized behind each other's delay.
type latencyProxy struct {
	ln    net.Listener
	to    string
	delay time.Duration
	wg    sync.WaitGroup
}

func startLatencyProxy(to string, delay time.Duration) (*latencyProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &latencyProxy{ln: ln, to: to, delay: delay}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is where clients connect.
func (p *latencyProxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting connections.
func (p *latencyProxy) Close() { _ = p.ln.Close(); p.wg.Wait() }

func (p *latencyProxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in)
	}
}

func (p *latencyProxy) forward(in net.Conn) {
	out, err := net.Dial("tcp", p.to)
	if err != nil {
		_ = in.Close()
		return
	}
	go p.pipe(out, in)
	p.pipe(in, out)
}

type chunk struct {
	data []byte
	due  time.Time
}

// pipe copies src to dst, each chunk delivered delay after it was read.
func (p *latencyProxy) pipe(dst, src net.Conn) {
	queue := make(chan chunk, 1024)
	go func() {
		defer close(queue)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				queue <- chunk{data: buf[:n], due: time.Now().Add(p.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range queue {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	// One side finished (HTTP clients and servers do not half-close): end both.
	_ = dst.Close()
	_ = src.Close()
	for range queue {
	}
}
