// Package toolstest helps tool authors test their tools: run a tool the way
// the Engine does, with a fake call, and assert on the Result envelope.
//
//	func TestForecast(t *testing.T) {
//		toolstest.CheckSpec(t, forecast)
//		r := toolstest.Run(t, forecast, `{"city":"Lisbon"}`)
//		toolstest.RequireOK(t, r)
//		r = toolstest.Run(t, forecast, `{"city":"Atlantis"}`)
//		toolstest.RequireError(t, r, tools.CodeNotFound)
//	}
package toolstest
