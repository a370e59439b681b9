// Package htmlreport writes report.html: one file that shows a person
// what a run, a sweep, a calibration or a solve found, and works
// offline.
//
// The file is whole in itself: its style and script are inline
// (go:embed), its charts are inline SVG drawn by package plots (long
// series reduced by LTTB for display only: the data keeps every window),
// and the result document it shows is inside it, gzip-compressed and
// base64-encoded in a <script type="application/json"> element, which the
// page decompresses with the browser's own DecompressionStream to offer
// it for download. No request leaves the page: nothing is loaded from
// anywhere, and a Content-Security-Policy that allows no source says so
// to the browser.
//
// A Page is built from the documents a command wrote (RunPage,
// SweepPage, CalibrationPage, SolvePage) or from a saved directory (FromDir, which
// finds which of them it holds); Write renders it atomically, so that a
// failure at any write leaves the earlier report or none, never a part.
// The same documents give the same bytes.
package htmlreport
