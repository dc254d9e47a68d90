// Package nested is another module: [Broken] is not checked.
package nested
