package swe

// ReasonClass is reasonClass, for the tests of package swe_test.
var ReasonClass = reasonClass
