package cluster

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

func TestListenerAt(t *testing.T) {
	for addr, want := range map[string]ListenerInfo{
		"127.0.0.1:6432": {Listen: "127.0.0.1:6432", ReadOnlyListen: "127.0.0.1:6433", Metrics: "127.0.0.1:6434"},
		"[::1]:65533":    {Listen: "[::1]:65533", ReadOnlyListen: "[::1]:65534", Metrics: "[::1]:65535"},
		":7000":          {Listen: ":7000", ReadOnlyListen: ":7001", Metrics: ":7002"},
	} {
		got, err := ListenerAt(addr)
		if err != nil || *got != want {
			t.Errorf("ListenerAt(%q) = %+v, %v; want %+v", addr, got, err, want)
		}
	}
	for _, addr := range []string{"127.0.0.1", "127.0.0.1:65534", "127.0.0.1:0", "127.0.0.1:x", "::1:6432"} {
		if _, err := ListenerAt(addr); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "--listener "+`"`+addr+`"`) {
			t.Errorf("ListenerAt(%q): %v; want bad input naming --listener", addr, err)
		}
	}
}
