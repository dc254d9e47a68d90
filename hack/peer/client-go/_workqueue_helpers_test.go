// This file is copied by hack/peer/client-go.sh into the ported
// util/workqueue tests (the leading underscore keeps it out of listwatch's
// own build). client-go's delaying-queue tests wait until AddAfter's request
// has left the queue's internal hand-off channel (waitingForAddCh) before
// stepping the fake clock. That channel exists only in client-go's queue;
// listwatch's AddAfter records the item before it returns, so there is
// nothing to wait for.

package workqueue

import (
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	. "k8s.io/client-go/util/workqueue"
)

func waitForWaitingQueueToFill(q DelayingInterface) error {
	v := reflect.Indirect(reflect.ValueOf(q))
	if t := fmt.Sprintf("%T", q); t != "*workqueue.delayingType[interface {}]" {
		return nil // listwatch's queue: AddAfter is synchronous
	}
	ch := v.FieldByName("waitingForAddCh")
	if !ch.IsValid() {
		panic("peer harness: client-go's delayingType has no waitingForAddCh: update hack/peer/client-go/_workqueue_helpers_test.go")
	}
	return wait.Poll(time.Millisecond, 10*time.Second, func() (bool, error) { //nolint:staticcheck // as the original
		return ch.Len() == 0, nil
	})
}
