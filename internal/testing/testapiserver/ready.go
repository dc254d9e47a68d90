package testapiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// pollInterval is how often a starting child is probed.
const pollInterval = 100 * time.Millisecond

// waitReady probes until probe succeeds, p dies, ctx ends or timeout passes.
// The last probe error is included when it gives up.
func waitReady(ctx context.Context, p *process, timeout time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		if err := p.exitedErr(); err != nil {
			return err
		}
		lastErr := probe(ctx)
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testapiserver: %s not ready after %v: %w (last probe: %v); log tail:\n%s",
				p.name, timeout, ctx.Err(), lastErr, p.logTail(40))
		case <-ticker.C:
		}
	}
}

// etcdProbe returns a probe that passes once etcd's /health says true.
func etcdProbe(etcdURL string) func(context.Context) error {
	return func(ctx context.Context) error {
		transport := &http.Transport{}
		defer transport.CloseIdleConnections()
		body, err := get(ctx, &http.Client{Transport: transport}, etcdURL+"/health", "")
		if err != nil {
			return err
		}
		if !strings.Contains(body, `"health":"true"`) {
			return fmt.Errorf("etcd unhealthy: %s", body)
		}
		return nil
	}
}

// apiserverProbe returns a probe that passes once /readyz answers 200 to
// the admin token over TLS verified against the apiserver's own CA. Each
// call reloads the CA file, which the apiserver writes early in its start.
func apiserverProbe(workDir, baseURL, token string) func(context.Context) error {
	return func(ctx context.Context) error {
		pool, err := loadCAPool(servingCertFile(workDir))
		if err != nil {
			return err
		}
		transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
		defer transport.CloseIdleConnections()
		_, err = get(ctx, &http.Client{Transport: transport}, baseURL+"/readyz", token)
		return err
	}
}

// loadCAPool reads PEM certificates into a fresh pool.
func loadCAPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("no certificate in %s yet", path)
	}
	return pool, nil
}

// get performs one GET and returns the body of a 200 response.
func get(ctx context.Context, client *http.Client, url, token string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}
