package workqueue

// ShutDown stops the queue: later adds are dropped (MisuseAddAfterShutDown),
// pending delays are discarded, and Get keeps handing out the items already
// queued, then reports shutdown. It cancels a waiting ShutDownWithDrain and
// returns once the queue's goroutines have exited. Calling it again is a no-op.
func (q *Typed[T]) ShutDown() {
	q.mu.Lock()
	q.shutDownLocked()
	q.drain = false
	q.idle.Broadcast()
	q.mu.Unlock()
	q.stopBackground()
}

// ShutDownWithDrain is ShutDown that also waits until no item is being
// processed (every Get has had its Done), like client-go. Items still queued
// are handed out by Get meanwhile. A concurrent ShutDown ends the wait.
// Workers must call Done, or this blocks for ever.
func (q *Typed[T]) ShutDownWithDrain() {
	q.mu.Lock()
	q.shutDownLocked()
	q.drain = true
	for q.processing > 0 && q.drain {
		q.idle.Wait()
	}
	q.mu.Unlock()
	q.stopBackground()
}

// shutDownLocked flips the queue into shutdown once: it discards pending
// delays and wakes every waiting Get.
func (q *Typed[T]) shutDownLocked() {
	if q.shuttingDown {
		return
	}
	q.closeIntakeLocked()
	q.shuttingDown = true
	if n := q.delays.live(); n > 0 {
		q.logger.V(4).Info("workqueue shut down with delayed items pending; dropping them", "queue", q.name, "count", n)
	}
	nodes := q.delays.a
	q.delays = delayHeap{}
	for i := range nodes {
		if q.liveDelay(&nodes[i]) {
			q.slab.at(nodes[i].idx).state &^= stWaiting
			q.release(nodes[i].idx)
		}
	}
	q.ready.Broadcast()
}

// stopBackground stops the delay and metrics goroutines and waits for them.
func (q *Typed[T]) stopBackground() {
	q.stopOnce.Do(func() {
		close(q.stop)
		if q.stopCtxWatch != nil {
			q.stopCtxWatch()
		}
	})
	q.wg.Wait()
}
