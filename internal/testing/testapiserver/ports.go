package testapiserver

import (
	"fmt"
	"net"
)

// freePorts asks the kernel for n distinct free TCP ports on 127.0.0.1.
// The listeners are held until all ports are picked, so the same port is
// never returned twice; another process may still grab one before the
// child binds it, which Start handles by retrying with fresh ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("testapiserver: picking a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
