package hosts

import (
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
)

func TestMain(m *testing.M) { e2etest.Main(m) }
