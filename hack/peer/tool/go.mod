module github.com/listwatch/listwatch/hack/peer/tool

go 1.26.0
