"""Drawing shared by the window and the exporters: colour scales, themes, the heatmap figure."""
