package repair

// CollapseSpace exposes collapseSpace to the tests.
var CollapseSpace = collapseSpace
