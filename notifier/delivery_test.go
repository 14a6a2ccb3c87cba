package notifier

import (
	"slices"
	"testing"
	"time"

	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/schedule"
)

// TestDeliveryDefaults: Delivery.WithDefaults is the one set of delivery
// defaults (the server's and the command's come from it), and it keeps
// what is set.
func TestDeliveryDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Delivery
		want Delivery
	}{
		{"unset", Delivery{}, Delivery{
			Policy:         schedule.Default(),
			AttemptTimeout: egress.DefaultTimeout,
			Lease:          egress.DefaultTimeout + DefaultLeaseMargin,
			Workers:        256,
			PerHost:        64,
		}},
		{"set", Delivery{
			Policy:         schedule.Policy{Delays: []time.Duration{time.Minute}, Window: time.Hour},
			AttemptTimeout: 5 * time.Second, Lease: time.Minute, Workers: 3, PerHost: 2,
		}, Delivery{
			Policy:         schedule.Policy{Delays: []time.Duration{time.Minute}, Window: time.Hour},
			AttemptTimeout: 5 * time.Second, Lease: time.Minute, Workers: 3, PerHost: 2,
		}},
		{"window only keeps the default delays", Delivery{Policy: schedule.Policy{Window: time.Hour}}, Delivery{
			Policy:         schedule.Policy{Delays: schedule.Default().Delays, Window: time.Hour},
			AttemptTimeout: egress.DefaultTimeout,
			Lease:          egress.DefaultTimeout + DefaultLeaseMargin,
			Workers:        256,
			PerHost:        64,
		}},
		{"lease follows the attempt timeout", Delivery{AttemptTimeout: time.Minute}, Delivery{
			Policy:         schedule.Default(),
			AttemptTimeout: time.Minute,
			Lease:          time.Minute + DefaultLeaseMargin,
			Workers:        256,
			PerHost:        64,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.in.WithDefaults()
			if !slices.Equal(got.Delays, tt.want.Delays) || got.Window != tt.want.Window ||
				got.AttemptTimeout != tt.want.AttemptTimeout || got.Lease != tt.want.Lease ||
				got.Workers != tt.want.Workers || got.PerHost != tt.want.PerHost {
				t.Errorf("WithDefaults() = %+v, want %+v", got, tt.want)
			}
			if c := (Config{Delivery: tt.in}).WithDefaults(); c.Workers != got.Workers || c.PerHost != got.PerHost ||
				c.Lease != got.Lease || c.AttemptTimeout != got.AttemptTimeout {
				t.Errorf("Config.WithDefaults' delivery part %+v differs from Delivery.WithDefaults' %+v", c.Delivery, got)
			}
		})
	}
}
