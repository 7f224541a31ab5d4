// Package predict holds the workbook's predictions for a burn: when a
// tier's window pairs detect it, how long its alerts take to resolve, and
// the factors and windows of the tiers the predictions read.
package predict
