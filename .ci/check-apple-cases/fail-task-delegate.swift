// expect: URLSessionTask.delegate
import Foundation

func start(_ task: URLSessionDataTask, delegate: URLSessionTaskDelegate) {
    task.delegate = delegate
    task.resume()
}
