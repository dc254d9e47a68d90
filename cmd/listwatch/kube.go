package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/spf13/pflag"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeFlags are kubectl's connection flags.
type kubeFlags struct {
	kubeconfig, context string
	// requestTimeout bounds discovery and writes, never watches.
	requestTimeout time.Duration
}

func (k *kubeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&k.context, "context", "", "the kubeconfig context to use")
	fs.DurationVar(&k.requestTimeout, "request-timeout", 30*time.Second, "timeout of discovery and write requests (watches are unaffected)")
}

// clientConfig loads the kubeconfig as kubectl does: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config, with --context overriding the current
// context.
func (k *kubeFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: k.context})
}

// restConfig returns the client configuration and the kubeconfig's
// namespace for the context.
func (k *kubeFlags) restConfig() (*rest.Config, string, error) {
	cc := k.clientConfig()
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("no kubeconfig found: pass --kubeconfig or set KUBECONFIG")
		}
		return nil, "", fmt.Errorf("invalid kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("invalid kubeconfig: %w", err)
	}
	cfg.UserAgent = "listwatch"
	return cfg, ns, nil
}

// withTimeout returns a copy of cfg whose requests time out: for discovery
// and writes only, since a client timeout would also cut watches.
func (k *kubeFlags) withTimeout(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Timeout = k.requestTimeout
	return c
}

// connectionError rewords a failure to reach the server as kubectl does,
// naming the host and hinting at the usual causes.
func connectionError(host string, err error) error {
	var ue *url.Error
	var ne net.Error
	if utilnet.IsConnectionRefused(err) || errors.As(err, &ne) || (errors.As(err, &ue) && ue.Err != nil) {
		return fmt.Errorf("the connection to the server %s failed - is the cluster running and are --kubeconfig/--context right? (%w)", host, err)
	}
	return err
}
