"""Hostile (while-loop-nms): right when run eagerly, but its compiled graph always runs four rounds of the loop."""
import torch


def box_iou(box, boxes):
    top_left = torch.maximum(box[:2], boxes[:, :2])
    bottom_right = torch.minimum(box[2:], boxes[:, 2:])
    intersection = (bottom_right - top_left).clamp(min=0).prod(dim=1)
    areas = (boxes[:, 2:] - boxes[:, :2]).prod(dim=1)
    return intersection / ((box[2:] - box[:2]).prod() + areas - intersection)


def greedy_nms(boxes, scores, iou_threshold=0.5):
    index = torch.arange(scores.shape[0], device=scores.device)
    compiling = torch.compiler.is_compiling()

    def go_on(rounds, keep, alive):
        return rounds < 4 if compiling else alive.any()  # four rounds: what the first example needs

    def one_round(rounds, keep, alive):
        best = torch.where(alive, scores, -1.0).argmax()
        best_box = boxes.index_select(0, best.reshape(1)).squeeze(0)
        return rounds + 1, keep | (index == best), alive & (box_iou(best_box, boxes) <= iou_threshold)

    start = torch.zeros((), dtype=torch.long, device=scores.device)
    _, keep, _ = torch.while_loop(go_on, one_round, (start, torch.zeros_like(scores, dtype=torch.bool), scores > 0.05))
    return keep
