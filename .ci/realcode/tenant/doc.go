// Package tenant runs `inferslo backtest` through the tenant gate Mimir and
// Cortex put in front of their query API (dskit's AuthenticateUser), in a
// module of its own so dskit's dependencies stay out of the others'.
package tenant
