; tilec rocm backend: amdgcn-amd-amdhsa for gfx90a
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@transpose.lds = internal addrspace(3) global [4096 x i8] undef, align 16
@transpose_no_barrier.lds = internal addrspace(3) global [4096 x i8] undef, align 16

define amdgpu_kernel void @transpose(ptr addrspace(1) %p0, ptr addrspace(1) %p1) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 256}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r0
  %r1 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r1
  %r2 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r2
  %cnt0 = alloca i64, addrspace(5)
  %cnt3 = alloca i64, addrspace(5)
  %v0 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt0
  br label %loop0
loop0:
  %v1 = load i64, ptr addrspace(5) %cnt0
  %v2 = icmp slt i64 %v1, %v0
  br i1 %v2, label %body1, label %exit2
body1:
  %v3 = trunc i64 %v1 to i32
  %v4 = mul i32 %v3, 1
  %v5 = add i32 0, %v4
  store i32 %v5, ptr addrspace(5) %r1
  %v6 = mul i32 %bid.y, 32
  %v7 = sdiv i32 %tid, 32
  %v8 = srem i32 %tid, 32
  %v9 = icmp ne i32 %v8, 0
  %v10 = xor i32 %v8, 32
  %v11 = icmp slt i32 %v10, 0
  %v12 = and i1 %v9, %v11
  %v13 = zext i1 %v12 to i32
  %v14 = sub i32 %v7, %v13
  %v15 = add i32 %v6, %v14
  %v16 = load i32, ptr addrspace(5) %r1
  %v17 = mul i32 8, %v16
  %v18 = add i32 %v15, %v17
  %v19 = mul i32 %v18, 64
  %v20 = mul i32 %bid.x, 32
  %v21 = add i32 %v19, %v20
  %v22 = sdiv i32 %tid, 32
  %v23 = srem i32 %tid, 32
  %v24 = icmp ne i32 %v23, 0
  %v25 = xor i32 %v23, 32
  %v26 = icmp slt i32 %v25, 0
  %v27 = and i1 %v24, %v26
  %v28 = select i1 %v27, i32 32, i32 0
  %v29 = add i32 %v23, %v28
  %v30 = add i32 %v21, %v29
  %v31 = sext i32 %v30 to i64
  %v32 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v31
  %v33 = load float, ptr addrspace(1) %v32, align 4
  store float %v33, ptr addrspace(5) %r0
  %v34 = load float, ptr addrspace(5) %r0
  %v35 = getelementptr inbounds i8, ptr addrspace(3) @transpose.lds, i32 0
  %v36 = sdiv i32 %tid, 32
  %v37 = srem i32 %tid, 32
  %v38 = icmp ne i32 %v37, 0
  %v39 = xor i32 %v37, 32
  %v40 = icmp slt i32 %v39, 0
  %v41 = and i1 %v38, %v40
  %v42 = zext i1 %v41 to i32
  %v43 = sub i32 %v36, %v42
  %v44 = load i32, ptr addrspace(5) %r1
  %v45 = mul i32 8, %v44
  %v46 = add i32 %v43, %v45
  %v47 = mul i32 %v46, 32
  %v48 = sdiv i32 %tid, 32
  %v49 = srem i32 %tid, 32
  %v50 = icmp ne i32 %v49, 0
  %v51 = xor i32 %v49, 32
  %v52 = icmp slt i32 %v51, 0
  %v53 = and i1 %v50, %v52
  %v54 = select i1 %v53, i32 32, i32 0
  %v55 = add i32 %v49, %v54
  %v56 = add i32 %v47, %v55
  %v57 = getelementptr inbounds float, ptr addrspace(3) %v35, i32 %v56
  store float %v34, ptr addrspace(3) %v57, align 4
  %v58 = load i64, ptr addrspace(5) %cnt0
  %v59 = add i64 %v58, 1
  store i64 %v59, ptr addrspace(5) %cnt0
  br label %loop0, !llvm.loop !2
exit2:
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %v60 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt3
  br label %loop3
loop3:
  %v61 = load i64, ptr addrspace(5) %cnt3
  %v62 = icmp slt i64 %v61, %v60
  br i1 %v62, label %body4, label %exit5
body4:
  %v63 = trunc i64 %v61 to i32
  %v64 = mul i32 %v63, 1
  %v65 = add i32 0, %v64
  store i32 %v65, ptr addrspace(5) %r2
  %v66 = getelementptr inbounds i8, ptr addrspace(3) @transpose.lds, i32 0
  %v67 = sdiv i32 %tid, 32
  %v68 = srem i32 %tid, 32
  %v69 = icmp ne i32 %v68, 0
  %v70 = xor i32 %v68, 32
  %v71 = icmp slt i32 %v70, 0
  %v72 = and i1 %v69, %v71
  %v73 = select i1 %v72, i32 32, i32 0
  %v74 = add i32 %v68, %v73
  %v75 = mul i32 %v74, 32
  %v76 = sdiv i32 %tid, 32
  %v77 = srem i32 %tid, 32
  %v78 = icmp ne i32 %v77, 0
  %v79 = xor i32 %v77, 32
  %v80 = icmp slt i32 %v79, 0
  %v81 = and i1 %v78, %v80
  %v82 = zext i1 %v81 to i32
  %v83 = sub i32 %v76, %v82
  %v84 = add i32 %v75, %v83
  %v85 = load i32, ptr addrspace(5) %r2
  %v86 = mul i32 8, %v85
  %v87 = add i32 %v84, %v86
  %v88 = getelementptr inbounds float, ptr addrspace(3) %v66, i32 %v87
  %v89 = load float, ptr addrspace(3) %v88, align 4
  store float %v89, ptr addrspace(5) %r0
  %v90 = load float, ptr addrspace(5) %r0
  %v91 = mul i32 %bid.x, 32
  %v92 = sdiv i32 %tid, 32
  %v93 = srem i32 %tid, 32
  %v94 = icmp ne i32 %v93, 0
  %v95 = xor i32 %v93, 32
  %v96 = icmp slt i32 %v95, 0
  %v97 = and i1 %v94, %v96
  %v98 = zext i1 %v97 to i32
  %v99 = sub i32 %v92, %v98
  %v100 = add i32 %v91, %v99
  %v101 = load i32, ptr addrspace(5) %r2
  %v102 = mul i32 8, %v101
  %v103 = add i32 %v100, %v102
  %v104 = mul i32 %v103, 64
  %v105 = mul i32 %bid.y, 32
  %v106 = add i32 %v104, %v105
  %v107 = sdiv i32 %tid, 32
  %v108 = srem i32 %tid, 32
  %v109 = icmp ne i32 %v108, 0
  %v110 = xor i32 %v108, 32
  %v111 = icmp slt i32 %v110, 0
  %v112 = and i1 %v109, %v111
  %v113 = select i1 %v112, i32 32, i32 0
  %v114 = add i32 %v108, %v113
  %v115 = add i32 %v106, %v114
  %v116 = sext i32 %v115 to i64
  %v117 = getelementptr inbounds float, ptr addrspace(1) %p1, i64 %v116
  store float %v90, ptr addrspace(1) %v117, align 4
  %v118 = load i64, ptr addrspace(5) %cnt3
  %v119 = add i64 %v118, 1
  store i64 %v119, ptr addrspace(5) %cnt3
  br label %loop3, !llvm.loop !4
exit5:
  ret void
}

define amdgpu_kernel void @transpose_no_barrier(ptr addrspace(1) %p0, ptr addrspace(1) %p1) #1 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 256}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r0
  %r1 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r1
  %r2 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r2
  %cnt0 = alloca i64, addrspace(5)
  %cnt3 = alloca i64, addrspace(5)
  %v0 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt0
  br label %loop0
loop0:
  %v1 = load i64, ptr addrspace(5) %cnt0
  %v2 = icmp slt i64 %v1, %v0
  br i1 %v2, label %body1, label %exit2
body1:
  %v3 = trunc i64 %v1 to i32
  %v4 = mul i32 %v3, 1
  %v5 = add i32 0, %v4
  store i32 %v5, ptr addrspace(5) %r1
  %v6 = mul i32 %bid.y, 32
  %v7 = sdiv i32 %tid, 32
  %v8 = srem i32 %tid, 32
  %v9 = icmp ne i32 %v8, 0
  %v10 = xor i32 %v8, 32
  %v11 = icmp slt i32 %v10, 0
  %v12 = and i1 %v9, %v11
  %v13 = zext i1 %v12 to i32
  %v14 = sub i32 %v7, %v13
  %v15 = add i32 %v6, %v14
  %v16 = load i32, ptr addrspace(5) %r1
  %v17 = mul i32 8, %v16
  %v18 = add i32 %v15, %v17
  %v19 = mul i32 %v18, 64
  %v20 = mul i32 %bid.x, 32
  %v21 = add i32 %v19, %v20
  %v22 = sdiv i32 %tid, 32
  %v23 = srem i32 %tid, 32
  %v24 = icmp ne i32 %v23, 0
  %v25 = xor i32 %v23, 32
  %v26 = icmp slt i32 %v25, 0
  %v27 = and i1 %v24, %v26
  %v28 = select i1 %v27, i32 32, i32 0
  %v29 = add i32 %v23, %v28
  %v30 = add i32 %v21, %v29
  %v31 = sext i32 %v30 to i64
  %v32 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v31
  %v33 = load float, ptr addrspace(1) %v32, align 4
  store float %v33, ptr addrspace(5) %r0
  %v34 = load float, ptr addrspace(5) %r0
  %v35 = getelementptr inbounds i8, ptr addrspace(3) @transpose_no_barrier.lds, i32 0
  %v36 = sdiv i32 %tid, 32
  %v37 = srem i32 %tid, 32
  %v38 = icmp ne i32 %v37, 0
  %v39 = xor i32 %v37, 32
  %v40 = icmp slt i32 %v39, 0
  %v41 = and i1 %v38, %v40
  %v42 = zext i1 %v41 to i32
  %v43 = sub i32 %v36, %v42
  %v44 = load i32, ptr addrspace(5) %r1
  %v45 = mul i32 8, %v44
  %v46 = add i32 %v43, %v45
  %v47 = mul i32 %v46, 32
  %v48 = sdiv i32 %tid, 32
  %v49 = srem i32 %tid, 32
  %v50 = icmp ne i32 %v49, 0
  %v51 = xor i32 %v49, 32
  %v52 = icmp slt i32 %v51, 0
  %v53 = and i1 %v50, %v52
  %v54 = select i1 %v53, i32 32, i32 0
  %v55 = add i32 %v49, %v54
  %v56 = add i32 %v47, %v55
  %v57 = getelementptr inbounds float, ptr addrspace(3) %v35, i32 %v56
  store float %v34, ptr addrspace(3) %v57, align 4
  %v58 = load i64, ptr addrspace(5) %cnt0
  %v59 = add i64 %v58, 1
  store i64 %v59, ptr addrspace(5) %cnt0
  br label %loop0, !llvm.loop !6
exit2:
  %v60 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt3
  br label %loop3
loop3:
  %v61 = load i64, ptr addrspace(5) %cnt3
  %v62 = icmp slt i64 %v61, %v60
  br i1 %v62, label %body4, label %exit5
body4:
  %v63 = trunc i64 %v61 to i32
  %v64 = mul i32 %v63, 1
  %v65 = add i32 0, %v64
  store i32 %v65, ptr addrspace(5) %r2
  %v66 = getelementptr inbounds i8, ptr addrspace(3) @transpose_no_barrier.lds, i32 0
  %v67 = sdiv i32 %tid, 32
  %v68 = srem i32 %tid, 32
  %v69 = icmp ne i32 %v68, 0
  %v70 = xor i32 %v68, 32
  %v71 = icmp slt i32 %v70, 0
  %v72 = and i1 %v69, %v71
  %v73 = select i1 %v72, i32 32, i32 0
  %v74 = add i32 %v68, %v73
  %v75 = mul i32 %v74, 32
  %v76 = sdiv i32 %tid, 32
  %v77 = srem i32 %tid, 32
  %v78 = icmp ne i32 %v77, 0
  %v79 = xor i32 %v77, 32
  %v80 = icmp slt i32 %v79, 0
  %v81 = and i1 %v78, %v80
  %v82 = zext i1 %v81 to i32
  %v83 = sub i32 %v76, %v82
  %v84 = add i32 %v75, %v83
  %v85 = load i32, ptr addrspace(5) %r2
  %v86 = mul i32 8, %v85
  %v87 = add i32 %v84, %v86
  %v88 = getelementptr inbounds float, ptr addrspace(3) %v66, i32 %v87
  %v89 = load float, ptr addrspace(3) %v88, align 4
  store float %v89, ptr addrspace(5) %r0
  %v90 = load float, ptr addrspace(5) %r0
  %v91 = mul i32 %bid.x, 32
  %v92 = sdiv i32 %tid, 32
  %v93 = srem i32 %tid, 32
  %v94 = icmp ne i32 %v93, 0
  %v95 = xor i32 %v93, 32
  %v96 = icmp slt i32 %v95, 0
  %v97 = and i1 %v94, %v96
  %v98 = zext i1 %v97 to i32
  %v99 = sub i32 %v92, %v98
  %v100 = add i32 %v91, %v99
  %v101 = load i32, ptr addrspace(5) %r2
  %v102 = mul i32 8, %v101
  %v103 = add i32 %v100, %v102
  %v104 = mul i32 %v103, 64
  %v105 = mul i32 %bid.y, 32
  %v106 = add i32 %v104, %v105
  %v107 = sdiv i32 %tid, 32
  %v108 = srem i32 %tid, 32
  %v109 = icmp ne i32 %v108, 0
  %v110 = xor i32 %v108, 32
  %v111 = icmp slt i32 %v110, 0
  %v112 = and i1 %v109, %v111
  %v113 = select i1 %v112, i32 32, i32 0
  %v114 = add i32 %v108, %v113
  %v115 = add i32 %v106, %v114
  %v116 = sext i32 %v115 to i64
  %v117 = getelementptr inbounds float, ptr addrspace(1) %p1, i64 %v116
  store float %v90, ptr addrspace(1) %v117, align 4
  %v118 = load i64, ptr addrspace(5) %cnt3
  %v119 = add i64 %v118, 1
  store i64 %v119, ptr addrspace(5) %cnt3
  br label %loop3, !llvm.loop !8
exit5:
  ret void
}

declare void @llvm.amdgcn.s.barrier()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" "uniform-work-group-size"="true" "target-cpu"="gfx90a" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }
attributes #1 = { "amdgpu-flat-work-group-size"="256,256" "uniform-work-group-size"="true" "target-cpu"="gfx90a" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
!1 = !{!"llvm.loop.unroll.full"}
!2 = distinct !{!2, !1}
!3 = !{!"llvm.loop.unroll.full"}
!4 = distinct !{!4, !3}
!5 = !{!"llvm.loop.unroll.full"}
!6 = distinct !{!6, !5}
!7 = !{!"llvm.loop.unroll.full"}
!8 = distinct !{!8, !7}
